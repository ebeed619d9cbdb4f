package operator

import (
	"github.com/turncli/turncli/internal/fault"
	"strconv"
)

// Paging of the list methods: a page holds 1..maxPageSize items (defaultPageSize when the
// request says 0), and a page token is the id of the last item of the previous page, whose
// next page holds only older items (smaller ids).
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// pageSize returns the page size a request asks for.
func pageSize(n uint32) (int, error) {
	switch {
	case n == 0:
		return defaultPageSize, nil
	case n > maxPageSize:
		return 0, fault.Newf(fault.InvalidArgument, "page_size must be 1..%d", maxPageSize)
	}
	return int(n), nil
}

// parsePageToken returns the id a page token names; 0 for the first page.
// errBadPageToken refuses a page token of any list: each list makes its own, none accepts
// another's.
var errBadPageToken = fault.New(fault.InvalidArgument, "page_token is not one this API returned")

func parsePageToken(t string) (int64, error) {
	if t == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(t, 10, 64)
	if err != nil || id <= 0 {
		return 0, errBadPageToken
	}
	return id, nil
}

// pageToken is the token of the page after the one ending with id.
func pageToken(id int64) string { return strconv.FormatInt(id, 10) }
