// Starts Swagger UI on /v1/docs. A file of its own, not an inline script:
// the page's Content-Security-Policy runs scripts from this server only
// (host/src/api/docs.rs serves both, and says why Swagger UI).
'use strict';

(function () {
  const root = document.getElementById('swagger-ui');

  /** The document names https://localhost:8443 as its server; "Try it out"
   * goes to the server this page came from instead (the page's CSP lets it
   * reach no other: connect-src 'self'). */
  function servedFromHere(description) {
    const here = window.location.origin;
    description.servers = [{ url: `${here}/v1`, description: 'This server' }];
    for (const item of Object.values(description.paths || {})) {
      if (item.servers) item.servers = [{ url: here, description: 'This server (outside /v1)' }];
    }
    return description;
  }

  function start(description) {
    window.ui = window.SwaggerUIBundle({
      spec: servedFromHere(description),
      domNode: root,
      deepLinking: true,
      // The bearer token typed into "Authorize" stays in this page's
      // memory; it is not written to localStorage.
      persistAuthorization: false,
      // No badge: it would ask validator.swagger.io about the document.
      validatorUrl: null,
      displayRequestDuration: true,
      defaultModelsExpandDepth: 0,
      // The API takes a bearer token, never the dashboard's session cookie.
      requestInterceptor: (request) => {
        request.credentials = 'omit';
        return request;
      },
    });
  }

  function fail(error) {
    const message = document.createElement('p');
    message.setAttribute('role', 'alert');
    message.textContent = `The API description could not be loaded (${error.message}). It is also at /v1/openapi.yaml.`;
    root.replaceChildren(message);
  }

  fetch('/v1/openapi.json', { credentials: 'omit', headers: { accept: 'application/json' } })
    .then((response) => {
      if (!response.ok) throw new Error(`GET /v1/openapi.json: ${response.status}`);
      return response.json();
    })
    .then(start)
    .catch(fail);
})();
