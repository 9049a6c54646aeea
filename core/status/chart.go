// chart.go draws the history as inline SVG on the server: three small
// panels (route queries/s, route p99, registrations/s) over the history's
// span, with no script and no external resource.

package status

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"
)

// Panel geometry in SVG user units.
const (
	panelW, panelH = 320, 110
	plotX, plotY   = 8, 22 // top left of the plot area
	plotW, plotH   = panelW - 16, panelH - 40
)

// panel is one series of the chart. Fill is the solid area under the line,
// a colour the browser test looks for in the screenshot.
type panel struct {
	id, title, stroke, fill string
	value                   func(Sample) float64
	format                  func(float64) string
}

var panels = []panel{
	{"chart-route-qps", "Route queries/s", "#1a5fb4", "#a8c8f0", func(s Sample) float64 { return s.RouteQPS }, rate},
	{"chart-route-p99", "Route p99", "#c64600", "#f5c09a", func(s Sample) float64 { return float64(s.RouteP99) }, latency},
	{"chart-registrations", "Registrations/s", "#26803a", "#a9dcb4", func(s Sample) float64 { return s.RegQPS }, rate},
}

func rate(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func latency(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%d µs", d/time.Microsecond)
}

// chartSVG draws samples (oldest first) ending at now over span. Only
// numbers and fixed strings go into the markup, so it is safe as
// template.HTML.
func chartSVG(samples []Sample, span time.Duration, now time.Time) template.HTML {
	var b strings.Builder
	for _, p := range panels {
		drawPanel(&b, p, samples, span, now)
	}
	return template.HTML(b.String())
}

func drawPanel(b *strings.Builder, p panel, samples []Sample, span time.Duration, now time.Time) {
	fmt.Fprintf(b, `<svg class="chart" id="%s" role="img" aria-label="%s, last %s" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">`,
		p.id, p.title, spanText(span), panelW, panelH, panelW, panelH)
	fmt.Fprintf(b, `<rect x="0.5" y="0.5" width="%d" height="%d" fill="#fbfbfb" stroke="#ccc"/>`, panelW-1, panelH-1)
	peak, last := 0.0, 0.0
	for _, s := range samples {
		peak = max(peak, p.value(s))
	}
	if len(samples) > 0 {
		last = p.value(samples[len(samples)-1])
	}
	fmt.Fprintf(b, `<text x="%d" y="15" font-size="12" font-family="sans-serif" fill="#222">%s: %s</text>`, plotX, p.title, p.format(last))
	fmt.Fprintf(b, `<text x="%d" y="15" font-size="10" font-family="sans-serif" fill="#666" text-anchor="end">max %s</text>`, panelW-8, p.format(peak))
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, plotX, plotY+plotH, plotX+plotW, plotY+plotH)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="10" font-family="sans-serif" fill="#666">-%s</text>`, plotX, panelH-6, spanText(span))
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="10" font-family="sans-serif" fill="#666" text-anchor="end">now</text>`, plotX+plotW, panelH-6)
	if len(samples) < 2 {
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" font-family="sans-serif" fill="#888" text-anchor="middle">collecting samples</text>`,
			plotX+plotW/2, plotY+plotH/2)
		b.WriteString(`</svg>`)
		return
	}
	if peak <= 0 {
		peak = 1 // a flat zero line at the bottom
	}
	x := func(at time.Time) float64 {
		f := 1 - float64(now.Sub(at))/float64(span)
		return plotX + min(max(f, 0), 1)*plotW
	}
	y := func(v float64) float64 { return plotY + plotH - v/peak*plotH }
	var line strings.Builder
	for i, s := range samples {
		if i > 0 {
			line.WriteByte(' ')
		}
		fmt.Fprintf(&line, "%.1f,%.1f", x(s.At), y(p.value(s)))
	}
	bottom := float64(plotY + plotH)
	fmt.Fprintf(b, `<polygon class="area" points="%.1f,%.1f %s %.1f,%.1f" fill="%s" stroke="none"/>`,
		x(samples[0].At), bottom, line.String(), x(samples[len(samples)-1].At), bottom, p.fill)
	fmt.Fprintf(b, `<polyline class="line" points="%s" fill="none" stroke="%s" stroke-width="2"/>`, line.String(), p.stroke)
	b.WriteString(`</svg>`)
}

func spanText(d time.Duration) string {
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%d h", d/time.Hour)
	}
	return fmt.Sprintf("%d min", d/time.Minute)
}
