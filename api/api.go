// Package api carries the service's OpenAPI 3.1 document, checked in and
// embedded in the binary, which serves it at GET /openapi.json.
package api

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of the whole HTTP API, as JSON.
//
//go:embed openapi.json
var OpenAPI []byte
