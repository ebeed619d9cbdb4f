package links

import (
	"html/template"
	"net/http"
)

// page is what a link's page shows. Every text in it is escaped by the template: titles,
// texts and refusals carry what agents, tools and jobs wrote.
type page struct {
	Heading string
	Message string
	// The item, when shown.
	Title, Text string
	// The form confirming the decision, when offered.
	Confirm     bool
	Decision    string
	Account     string
	Surface     string
	Expires     string
	ConfirmName string
	ConfirmTo   string
}

// confirmField is the form field carrying the page's confirmation (Key.confirmation).
const confirmField = "confirm"

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title>turncli: {{.Heading}}</title></head>
<body>
<h1>{{.Heading}}</h1>
{{if .Message}}<p>{{.Message}}</p>{{end}}
{{if .Title}}<h2>{{.Title}}</h2>{{end}}
{{if .Text}}<pre>{{.Text}}</pre>{{end}}
{{if .Confirm}}<p>This link acts as the {{.Surface}} account {{printf "%q" .Account}}. It can be used until {{.Expires}}.</p>
<form method="post"><input type="hidden" name="{{.ConfirmName}}" value="{{.ConfirmTo}}">
<button type="submit">Confirm: {{.Decision}}</button></form>{{end}}
</body>
</html>
`))

// contentSecurityPolicy allows the page nothing but posting its own form back: no script,
// no style from anywhere, no framing.
const contentSecurityPolicy = "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// write sends p with status and the headers every page carries.
func write(w http.ResponseWriter, status int, p page) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, p)
}
