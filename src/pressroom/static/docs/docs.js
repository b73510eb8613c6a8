// Renders the OpenAPI document with the vendored Swagger UI. A file of its own rather than an
// inline script, so the page works under a Content-Security-Policy without 'unsafe-inline'.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-openapi-url"),
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    // No badge from validator.swagger.io: the page makes no request beyond this service.
    validatorUrl: null,
  });
  // Swagger UI draws its server picker without a label (axe: select-name, critical): name it,
  // and again whenever Swagger UI draws it anew.
  function labelServers() {
    var servers = document.getElementById("servers");
    if (servers && !servers.hasAttribute("aria-label")) {
      servers.setAttribute("aria-label", "Server");
    }
  }
  new MutationObserver(labelServers).observe(root, { childList: true, subtree: true });
  labelServers();
})();
