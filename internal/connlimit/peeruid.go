package connlimit

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerKey is what the per-address limit counts a connection under: its remote IP, and, for a
// loopback connection, the user owning the client's socket as well. Every local client shares
// 127.0.0.1, and each agent's shells run as a user of their own, so without the user one
// agent's shells could take every loopback connection the runtime and the other agents need.
func peerKey(c net.Conn) string {
	remote, ok1 := c.RemoteAddr().(*net.TCPAddr)
	local, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return c.RemoteAddr().String()
	}
	ip := remote.IP.String()
	if !remote.IP.IsLoopback() {
		return ip
	}
	uid, err := socketOwner(remote, local)
	if err != nil {
		return ip // the client's socket is already gone, or the kernel cannot say
	}
	return ip + " uid " + itoa(uid)
}

func itoa(n uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}

// Sizes and offsets of the sock_diag messages (linux/inet_diag.h).
const (
	inetDiagReqV2Len = 56 // family, protocol, ext, pad, states, inet_diag_sockid
	inetDiagUIDOff   = 64 // of inet_diag_msg: family..retrans (4), sockid (48), expires, rqueue, wqueue
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
)

// diag is the process's one sock_diag socket, opened on first use and kept: asking is then two
// system calls. One question at a time, so every answer is the one asked for.
var diag = struct {
	mu  sync.Mutex
	fd  int
	buf [1024]byte
}{fd: -1}

// socketOwner asks the kernel (NETLINK_SOCK_DIAG, as ss does) for the uid owning the TCP
// socket whose source is src and destination dst: the client's end of a loopback connection.
func socketOwner(src, dst *net.TCPAddr) (uint32, error) {
	family, srcIP, dstIP := uint8(unix.AF_INET), src.IP.To4(), dst.IP.To4()
	if srcIP == nil || dstIP == nil {
		family, srcIP, dstIP = unix.AF_INET6, src.IP.To16(), dst.IP.To16()
	}
	req := make([]byte, unix.NLMSG_HDRLEN+inetDiagReqV2Len)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(req[8:], 1) // sequence
	r := req[unix.NLMSG_HDRLEN:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(r[4:], 0xffffffff) // every state
	id := r[8:]
	binary.BigEndian.PutUint16(id[0:], uint16(src.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(dst.Port))
	copy(id[4:20], srcIP)
	copy(id[20:36], dstIP)
	binary.NativeEndian.PutUint32(id[40:], 0xffffffff) // no cookie
	binary.NativeEndian.PutUint32(id[44:], 0xffffffff)

	diag.mu.Lock()
	defer diag.mu.Unlock()
	if diag.fd < 0 {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		if err != nil {
			return 0, err
		}
		diag.fd = fd
	}
	if err := unix.Sendto(diag.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(diag.fd)
		diag.fd = -1
		return 0, err
	}
	n, _, err := unix.Recvfrom(diag.fd, diag.buf[:], 0)
	if err != nil {
		unix.Close(diag.fd)
		diag.fd = -1
		return 0, err
	}
	buf := diag.buf[:]
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil || len(msgs) == 0 {
		return 0, errors.New("sock_diag: no answer")
	}
	m := msgs[0]
	if m.Header.Type != sockDiagByFamily || len(m.Data) < inetDiagUIDOff+4 {
		return 0, errors.New("sock_diag: no such socket")
	}
	return binary.NativeEndian.Uint32(m.Data[inetDiagUIDOff:]), nil
}
