package secrets

import (
	"errors"
	"io"
)

// MaskedRead reads up to limit bytes of ra (size bytes long) from offset and masks the live
// secrets in them (see Mask). It reads MaxLength-1 bytes more on each side, so a secret cut by
// either end of the range is masked too: reading a text in ranges of any size and joining them
// gives the text masked whole.
func (r *Registry) MaskedRead(ra io.ReaderAt, size, offset int64, limit int) ([]byte, error) {
	if offset < 0 || offset >= size || limit <= 0 {
		return nil, nil
	}
	end := min(offset+int64(limit), size)
	reach := int64(r.MaxLength() - 1)
	from, to := max(offset-reach, 0), min(end+reach, size)
	buf := make([]byte, to-from)
	n, err := ra.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = buf[:n]
	r.Mask(buf)
	lo, hi := offset-from, min(end-from, int64(n))
	if lo >= hi {
		return nil, nil
	}
	return buf[lo:hi], nil
}
