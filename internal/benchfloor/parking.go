package benchfloor

import (
	"net/http"
	"strings"
	"sync"
)

// Parking is the floor of a parked long poll: a GET under CallsPathPrefix waits, in the handler
// itself and on one channel shared by all of them, until Release, then answers as HTTPHandler
// does. What each parked GET then holds is what net/http alone holds for a request on its own
// connection: the connection's goroutine and buffers, its background reader, the request.
type Parking struct {
	released chan struct{}
	once     sync.Once
	answer   http.Handler
}

// NewParking returns a Parking floor with its GETs held until Release.
func NewParking() *Parking {
	return &Parking{released: make(chan struct{}), answer: HTTPHandler()}
}

func (p *Parking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, CallsPathPrefix) {
		select {
		case <-p.released:
		case <-r.Context().Done():
			return
		}
	}
	p.answer.ServeHTTP(w, r)
}

// Release answers every parked GET, and every later one at once.
func (p *Parking) Release() { p.once.Do(func() { close(p.released) }) }
