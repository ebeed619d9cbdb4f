package shelltk

const (
	// headMax is how many bytes of the start of a stream a command keeps.
	headMax = 4 << 10
	// tailMax is how many bytes of the end of a stream a command keeps.
	tailMax = 8 << 10
)

// capture keeps the first headMax and the last tailMax bytes of one output stream and counts
// the bytes in between, so a command's memory stays bounded however much it writes.
type capture struct {
	head []byte
	// tail is a ring buffer once it holds tailMax bytes; next is where its oldest byte is.
	tail  []byte
	next  int
	total int64
}

func (c *capture) write(p []byte) {
	c.total += int64(len(p))
	if n := min(headMax-len(c.head), len(p)); n > 0 {
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	if len(p) >= tailMax {
		c.tail = append(c.tail[:0], p[len(p)-tailMax:]...)
		c.next = 0
		return
	}
	for len(p) > 0 {
		if len(c.tail) < tailMax {
			n := min(tailMax-len(c.tail), len(p))
			c.tail = append(c.tail, p[:n]...)
			p = p[n:]
			continue
		}
		n := copy(c.tail[c.next:], p)
		c.next = (c.next + n) % tailMax
		p = p[n:]
	}
}

// parts returns the kept head, a copy of the kept tail in order, and how many bytes between
// them were dropped.
func (c *capture) parts() (head, tail []byte, dropped int64) {
	tail = make([]byte, 0, len(c.tail))
	tail = append(tail, c.tail[c.next:]...)
	tail = append(tail, c.tail[:c.next]...)
	return c.head, tail, c.total - int64(len(c.head)) - int64(len(c.tail))
}
