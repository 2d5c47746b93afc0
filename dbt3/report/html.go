package report

import (
	"bytes"
	"html/template"
	"strings"
)

// HTMLFile is the self-contained HTML report Write creates beside the Markdown one.
const HTMLFile = "report.html"

// htmlPage is the HTML report: the answer first, the run's setting, the elapsed table and
// every plot inline, so that the one file can be mailed or opened anywhere.
var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 72em; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 0.2em 0.6em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child, td.text { text-align: left; }
tr.total td { font-weight: bold; }
.answer { font-size: 1.1em; font-weight: 600; }
.warning { background: #fff3cd; border-left: 4px solid #e0a800; padding: 0.5em 1em; }
figure { margin: 1.5em 0; } svg { max-width: 100%; height: auto; }
</style></head><body>
<h1>{{.Title}}</h1>
<p class="answer">{{.Answer}}</p>
{{if .Warning}}<p class="warning"><strong>Warning.</strong> {{.Warning}}</p>{{end}}
<p>{{.Setting}}<br>Host: {{.Host}}{{if .Code}}<br>Code: {{.Code}}{{end}}{{if .Command}}<br>Command: <code>{{.Command}}</code>{{end}}</p>
<h2>Elapsed seconds, median [min–max] over the warm rounds</h2>
<table><thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr{{if .Total}} class="total"{{end}}>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{range .Plots}}<figure>{{.}}</figure>
{{end}}{{if .Notes}}<h2>Notes</h2><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body></html>
`))

type htmlRow struct {
	Total bool
	Cells []string
}

// WriteHTML renders the HTML report of c with the given SVG plots inline.
func WriteHTML(c *Comparison, plots [][]byte) ([]byte, error) {
	header, rows := elapsedTable(c)
	data := struct {
		Title, Answer, Warning, Setting, Host, Code, Command string
		Header                                               []string
		Rows                                                 []htmlRow
		Plots                                                []template.HTML
		Notes                                                []string
	}{
		Title:   "colink: the link's transports, " + strings.Join(c.Transports, " against ") + " — " + c.Run.ID,
		Answer:  c.Answer(),
		Warning: c.roundsWarning(),
		Setting: settingText(c),
		Host:    hostText(c.Run.Host),
		Code:    buildsText(c.Run.Builds),
		Command: c.Run.Command,
		Header:  header,
		Notes:   c.Run.Notes,
	}
	for _, r := range rows {
		row := htmlRow{Cells: make([]string, len(r))}
		for i, v := range r {
			if strings.HasPrefix(v, "**") {
				row.Total = true
			}
			row.Cells[i] = strings.ReplaceAll(v, "**", "")
		}
		data.Rows = append(data.Rows, row)
	}
	for _, svg := range plots {
		// An inline SVG drops its XML declaration. The plots are gonum's own output, not
		// user input: they are trusted markup.
		if i := bytes.Index(svg, []byte("<svg")); i > 0 {
			svg = svg[i:]
		}
		data.Plots = append(data.Plots, template.HTML(svg))
	}
	var b bytes.Buffer
	if err := htmlPage.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
