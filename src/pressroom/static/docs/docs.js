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
})();
