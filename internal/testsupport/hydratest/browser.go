package hydratest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
)

const maxRedirects = 20

// Browse acts as the person's browser: it GETs authURL and follows every
// redirect, with a fresh cookie jar (Hydra needs its CSRF cookies), through
// login and consent to the client's redirect_uri, which it also GETs (the app
// under test listens there, e.g. http://127.0.0.1:PORT/callback). It returns
// the final response's status code and the final URL without its query and
// fragment, which hold the authorization code. Errors never carry a URL's
// query either.
func (h *Hydra) Browse(ctx context.Context, authURL string) (status int, finalURL string, err error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return 0, "", err
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{
		Jar:       jar,
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return 0, "", fmt.Errorf("hydratest: browse: %w", unwrapURLError(err))
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return 0, "", fmt.Errorf("hydratest: browse: %s %s: %w", ue.Op, withoutQuery(ue.URL), ue.Err)
		}
		return 0, "", fmt.Errorf("hydratest: browse: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, withoutQuery(resp.Request.URL.String()), nil
}

func withoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}
