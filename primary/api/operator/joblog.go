package operator

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
)

// maxLogRead is the most of a job's log one GetJobLog returns, and its default.
const maxLogRead = 1 << 20

// logContentType is the content type of a job's log: its bytes as the job wrote them.
const logContentType = "text/plain; charset=utf-8"

// readLog returns up to limit bytes of the log at path from offset. A log not written yet
// (no path, no file) and an offset at or past its end read as empty.
func readLog(path string, offset uint64, limit int) ([]byte, error) {
	if path == "" || offset > math.MaxInt64 {
		return nil, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if int64(offset) >= fi.Size() {
		return nil, nil
	}
	buf := make([]byte, min(int64(limit), fi.Size()-int64(offset)))
	n, err := f.ReadAt(buf, int64(offset))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}
