package operator

import (
	"strconv"
	"time"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/pagetoken"
)

// Paging of every list method, one rule for all: a page holds 1..maxPageSize records
// (defaultPageSize when the request says 0; more is refused), and a page token (package
// pagetoken) holds the position of the previous page's last record, bound to the list and
// the request's filters. The store reads the page after that position (keyset), so records
// added between pages never make a later page skip or repeat one.
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
		return 0, fault.Newf(fault.InvalidArgument, "page_size must be 1..%d (0 means %d)", maxPageSize, defaultPageSize)
	}
	return int(n), nil
}

// listPage is one list request's paging: the list's name and its filter values, in an order
// the list fixes, which every token it makes or reads is bound to.
type listPage struct {
	list   string
	filter []string
}

// page starts the paging of a request of list with the filter values filter.
func page(list string, filter ...string) listPage { return listPage{list: list, filter: filter} }

// position returns the position a token holds, of fields fields; nil for the first page.
func (p listPage) position(token string, fields int) (pagetoken.Position, error) {
	return pagetoken.Decode(token, p.list, p.filter, fields)
}

// next is the token of the page after the record at pos.
func (p listPage) next(pos ...string) string { return pagetoken.Encode(p.list, p.filter, pos) }

// beforeID returns the id a token of a list ordered by id holds; 0 for the first page.
func (p listPage) beforeID(token string) (int64, error) {
	pos, err := p.position(token, 1)
	if err != nil || pos == nil {
		return 0, err
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id <= 0 {
		return 0, pagetoken.ErrMalformed
	}
	return id, nil
}

// nextID is the token of the page after the record with id. A list returns it after a full
// page only: a shorter page is the last.
func (p listPage) nextID(id int64) string { return p.next(strconv.FormatInt(id, 10)) }

// idPage opens one page of list, ordered by id, for a request asking for size records from
// token with the filter values filter: the page, its size, and the id the page reads before
// (0 for the first page).
func idPage(list string, size uint32, token string, filter ...string) (listPage, int, int64, error) {
	limit, err := pageSize(size)
	if err != nil {
		return listPage{}, 0, 0, err
	}
	p := page(list, filter...)
	before, err := p.beforeID(token)
	return p, limit, before, err
}

// encodeIDPage encodes the records of a page of limit records ordered by id, and the token of
// the next page after a full one (empty after a shorter one, the last).
func encodeIDPage[R, P any](p listPage, limit int, records []R, id func(R) int64, encode func(R) P) ([]P, string) {
	out := make([]P, 0, len(records))
	for _, r := range records {
		out = append(out, encode(r))
	}
	if len(records) == limit {
		return out, p.nextID(id(records[len(records)-1]))
	}
	return out, ""
}

// timeKey returns the time and the key fields a token of a list ordered by time holds: the
// zero time and nil for the first page.
func (p listPage) timeKey(token string, keys int) (time.Time, []string, error) {
	pos, err := p.position(token, 1+keys)
	if err != nil || pos == nil {
		return time.Time{}, nil, err
	}
	ns, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || ns == 0 {
		return time.Time{}, nil, pagetoken.ErrMalformed
	}
	return time.Unix(0, ns).UTC(), pos[1:], nil
}

// nextTime is the token of the page after the record at (at, key...).
func (p listPage) nextTime(at time.Time, key ...string) string {
	return p.next(append([]string{strconv.FormatInt(at.UnixNano(), 10)}, key...)...)
}
