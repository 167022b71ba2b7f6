package client

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// bodyForm reads a request's body (raw) as porta would: a form, url-encoded or multipart. A multipart
// file part is one value, "<file name> (<n> bytes, <type>)", so that tests see what was uploaded.
func bodyForm(r *http.Request, raw []byte) (url.Values, error) {
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != "multipart/form-data" {
		return url.ParseQuery(string(raw))
	}
	form := url.Values{}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return form, nil
		}
		if err != nil {
			return nil, err
		}
		content, err := io.ReadAll(part)
		if err != nil {
			return nil, err
		}
		value := string(content)
		if part.FileName() != "" {
			value = fmt.Sprintf("%s (%d bytes, %s)", part.FileName(), len(content), part.Header.Get("Content-Type"))
		}
		form.Add(part.FormName(), value)
	}
}

// formMediaType is the media type of a request's form body ("application/x-www-form-urlencoded",
// "multipart/form-data").
func formMediaType(r *http.Request) string {
	mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.TrimSpace(mt)
}
