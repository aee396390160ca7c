// Package web carries the live seat map page served at GET /: plain HTML,
// CSS and JavaScript embedded in the binary, with no build step and no
// dependency.
package web

import "embed"

// FS holds index.html and the assets it loads.
//
//go:embed index.html app.js style.css
var FS embed.FS
