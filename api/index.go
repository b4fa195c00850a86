package api

import (
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
)

// route is one endpoint of the listener, as the index at / describes it.
type route struct {
	method, path, what string
}

// writeIndex answers GET / with the endpoints, as HTML for browsers and plain text otherwise
// (curl's "*/*" gets text).
func writeIndex(w http.ResponseWriter, r *http.Request, routes []route) {
	w.Header().Set("Vary", "Accept")
	if prefersHTML(r.Header.Get("Accept")) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>flapjack</title></head>\n<body>\n<h1>flapjack HTTP listener</h1>\n<ul>\n")
		for _, rt := range routes {
			name := html.EscapeString(rt.method + " " + rt.path)
			if rt.method == http.MethodGet {
				// Relative links keep working behind a proxy that mounts the listener under a prefix.
				name = `<a href="` + html.EscapeString(strings.TrimPrefix(rt.path, "/")) + `">` + name + "</a>"
			}
			fmt.Fprintf(&b, "<li><code>%s</code> — %s</li>\n", name, html.EscapeString(rt.what))
		}
		b.WriteString("</ul>\n</body></html>\n")
		io.WriteString(w, b.String())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	io.WriteString(tw, "flapjack HTTP listener\n\n")
	for _, rt := range routes {
		fmt.Fprintf(tw, "%s %s\t%s\n", rt.method, rt.path, rt.what)
	}
	tw.Flush()
}

// prefersHTML reports whether an Accept header ranks text/html above text/plain. Each type takes
// the quality of the most specific range matching it (text/html, text/*, */*); a tie, or no
// header, means text.
func prefersHTML(accept string) bool {
	return quality(accept, "text/html") > quality(accept, "text/plain")
}

func quality(accept, typ string) float64 {
	major, _, _ := strings.Cut(typ, "/")
	best, q := 0, 0.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		specific := 0
		switch mt {
		case typ:
			specific = 3
		case major + "/*":
			specific = 2
		case "*/*":
			specific = 1
		}
		if specific <= best {
			continue
		}
		best, q = specific, 1
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 1 {
				q = f
			}
		}
	}
	return q
}
