// Package docs holds the operator documentation (the Markdown pages beside
// this file) and only tests of it: every relative link of README.md and
// the pages must name a file that exists and, for a Markdown file, a
// heading it has. The tables of keys are generated and checked by
// core/config (make docs).
package docs
