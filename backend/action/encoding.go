package action

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"
)

// readBody reads the answer's body, at most limit bytes once decoded, and
// decodes the one content coding the executor asks for (gzip) before
// anything is redacted.
//
// On a credentialed request an answer the redactor could not read is
// withheld with a *WithheldError: a 206 Partial Content (the agent may not
// ask for a range, and slices of an echo pass the redactor one at a time),
// or a Content-Encoding other than the gzip the executor asked for, which
// the agent could decode into the secret (or a gzip stream that does not
// decode). Without a credential there is no secret to hide: what the
// executor did not ask for is returned as it came, Content-Encoding header
// and all.
func readBody(resp *http.Response, limit int64, credentialed, askedGzip bool) ([]byte, http.Header, error) {
	h := resp.Header.Clone()
	withheld := &WithheldError{Status: resp.StatusCode, Reason: WithheldEncoded}
	if credentialed && resp.StatusCode == http.StatusPartialContent {
		withheld.Reason = WithheldPartial
		return nil, nil, withheld
	}
	codings := contentCodings(h)
	isGzip := askedGzip && len(codings) == 1 && (codings[0] == "gzip" || codings[0] == "x-gzip")
	switch {
	case len(codings) == 0, !isGzip && !credentialed:
		body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
		return body, h, err
	case !isGzip:
		return nil, nil, withheld
	}
	z, err := gzip.NewReader(resp.Body)
	if errors.Is(err, io.EOF) {
		h.Del("Content-Encoding")
		return nil, h, nil // no body (HEAD, 204, 304)
	}
	if err != nil {
		if credentialed {
			return nil, nil, withheld
		}
		return nil, nil, err
	}
	// The cap applies to the decoded bytes: a decompression bomb stops
	// where a plain body would.
	body, err := io.ReadAll(io.LimitReader(z, limit))
	if err != nil {
		if credentialed {
			return nil, nil, withheld
		}
		return nil, nil, err
	}
	h.Del("Content-Encoding")
	return body, h, nil
}

// contentCodings lists the answer's content codings, lower case, without
// "identity".
func contentCodings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	return out
}
