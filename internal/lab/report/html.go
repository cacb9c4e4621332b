package report

import (
	"bytes"
	"encoding/base64"
	"html/template"
	"strings"
)

// The HTML page is built by html/template from the same blocks as the
// Markdown: every text is escaped by the template, and the only trusted value
// is each chart's data: URL, made from SVG bytes package chart drew. The page's
// own styles are greys only (links too), so that colour on it comes from the
// charts: make browser-test counts on that.
const pageTemplate = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:78rem;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:0.5rem 0 1.5rem;font-size:0.85rem}
th,td{border:1px solid #ccc;padding:0.3rem 0.5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}
code{background:#f3f3f3;padding:0 0.2rem}
figure{display:inline-block;margin:0.5rem}
figcaption{font-size:0.8rem;text-align:center}
nav ul{margin:0.2rem 0}
a{color:#333}
</style></head><body>
{{range .Blocks}}
{{- with .Heading}}{{if eq .Level 1}}<h1 id="{{.ID}}">{{.Text}}</h1>{{else if eq .Level 2}}<h2 id="{{.ID}}">{{.Text}}</h2>{{else}}<h3 id="{{.ID}}">{{.Text}}</h3>{{end}}{{end}}
{{- with .Warning}}<p role="alert" style="border:3px solid #222;padding:0.5rem 0.8rem;font-weight:bold">Warning: {{range .}}{{if .Code}}<code>{{.Text}}</code>{{else}}{{.Text}}{{end}}{{end}}</p>{{end}}
{{- with .Para}}<p>{{range .}}{{if .Code}}<code>{{.Text}}</code>{{else}}{{.Text}}{{end}}{{end}}</p>{{end}}
{{- with .TOC}}<nav><p>Contents</p><ul>{{range .}}<li{{if eq .Level 3}} style="margin-left:1.5rem"{{end}}><a href="#{{.ID}}">{{.Text}}</a></li>{{end}}</ul></nav>{{end}}
{{- with .Table}}<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}
{{- with .Chart}}<figure><img alt="{{.Title}}" src="{{.Src}}"><figcaption>{{.Title}}</figcaption></figure>{{end}}
{{end}}</body></html>
`

var page = template.Must(template.New("report").Parse(pageTemplate))

type htmlHeading struct {
	Level    int
	ID, Text string
}

type span struct {
	Text string
	Code bool
}

type htmlTable struct {
	Header []string
	Rows   [][]string
}

type htmlChart struct {
	Title string
	Src   template.URL
}

// htmlBlock is one block for the template: exactly one field is set.
type htmlBlock struct {
	Heading *htmlHeading
	Para    []span
	Warning []span
	TOC     []htmlHeading
	Table   *htmlTable
	Chart   *htmlChart
}

// HTML renders the report as one self-contained page: styles inline, charts
// as inline SVG data, nothing fetched from the network.
func (rep *Report) HTML() (string, error) { return renderHTML("locklab comparison", rep.blocks(true)) }

// renderHTML renders blocks as one self-contained page titled title.
func renderHTML(title string, blocks []block) (string, error) {
	anchors := headingAnchors(blocks)
	var out []htmlBlock
	for i, blk := range blocks {
		switch x := blk.(type) {
		case heading:
			out = append(out, htmlBlock{Heading: &htmlHeading{Level: x.level, ID: anchors[i], Text: x.text}})
		case para:
			out = append(out, htmlBlock{Para: codeSpans(string(x))})
		case warning:
			out = append(out, htmlBlock{Warning: codeSpans(string(x))})
		case toc:
			var entries []htmlHeading
			for j, e := range blocks[i:] {
				if h, ok := e.(heading); ok && h.level >= 2 {
					entries = append(entries, htmlHeading{Level: h.level, ID: anchors[i+j], Text: h.text})
				}
			}
			out = append(out, htmlBlock{TOC: entries})
		case table:
			out = append(out, htmlBlock{Table: &htmlTable{Header: x.header, Rows: x.rows}})
		case chart:
			out = append(out, htmlBlock{Chart: htmlChartOf(x)})
		case picture:
			out = append(out, htmlBlock{Chart: htmlChartOf(x.chart)})
		}
	}
	var b bytes.Buffer
	err := page.Execute(&b, struct {
		Title  string
		Blocks []htmlBlock
	}{title, out})
	return b.String(), err
}

// htmlChartOf is a chart for the template: its SVG as a data: URL.
func htmlChartOf(c chart) *htmlChart {
	return &htmlChart{Title: c.title, Src: template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(c.svg))}
}

// codeSpans splits a paragraph at backquotes: `x` becomes a code span.
func codeSpans(s string) []span {
	var out []span
	for i, part := range strings.Split(s, "`") {
		if part != "" {
			out = append(out, span{Text: part, Code: i%2 == 1})
		}
	}
	return out
}
