// The console's few behaviours that need a script: the person's time zone on first visit,
// and uploads with a progress bar. Everything else is plain forms and htmx.
(function () {
  "use strict";
  if (!document.cookie.split("; ").some(function (c) { return c.indexOf("pressroom_tz=") === 0; })) {
    try {
      var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      if (zone) { document.cookie = "pressroom_tz=" + encodeURIComponent(zone) + "; path=/console; max-age=31536000; samesite=lax"; }
    } catch (e) { /* the console stays in UTC */ }
  }

  function upload(form) {
    var input = form.querySelector("input[type=file]");
    var bar = form.querySelector("progress");
    var status = form.querySelector("[data-upload-status]");
    if (!input || !input.files.length) { return; }
    var data = new FormData();
    for (var i = 0; i < input.files.length; i++) { data.append("files", input.files[i]); }
    var request = new XMLHttpRequest();
    request.open("POST", form.action);
    request.setRequestHeader("X-CSRF-Token", document.body.dataset.csrf || "");
    request.setRequestHeader("HX-Request", "true");
    bar.hidden = false;
    bar.value = 0;
    request.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable) {
        bar.value = Math.round((event.loaded / event.total) * 100);
        status.textContent = "Uploading: " + bar.value + "%";
      }
    });
    request.addEventListener("load", function () {
      bar.value = 100;
      var target = document.getElementById(form.dataset.target);
      if (request.status >= 200 && request.status < 300 && target) {
        target.insertAdjacentHTML("beforeend", request.responseText);
        status.textContent = "Uploaded.";
        input.value = "";
      } else {
        status.textContent = request.responseText ? new DOMParser().parseFromString(request.responseText, "text/html").body.textContent.trim() : "The upload failed.";
      }
    });
    request.addEventListener("error", function () { status.textContent = "The upload failed."; });
    request.send(data);
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.matches && form.matches("form[data-upload]")) {
      event.preventDefault();
      upload(form);
    }
  });
})();
