package mountview

import (
	"syscall"
	"unsafe"
)

// What the syscall package lacks, from linux/mount.h and linux/fcntl.h. The package uses no
// other system call package so that the sandbox's init, which imports it, is initialised early
// (see internal/sandbox/sandboxinit).
const (
	sysMountSetattr = 442 // the same number on every architecture
	atFdcwd         = -100
	atRecursive     = 0x8000
	mountAttrRdonly = 0x1
	mountAttrNosuid = 0x2
	mountAttrNodev  = 0x4
	oPath           = 0x200000
)

// mountAttr is struct mount_attr.
type mountAttr struct {
	set, clr, propagation, usernsFD uint64
}

// setattrRecursive sets attrs on the mount at path and every mount below it.
func setattrRecursive(path string, attrs uint64) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	a := mountAttr{set: attrs}
	fd := atFdcwd
	_, _, errno := syscall.Syscall6(sysMountSetattr, uintptr(fd), uintptr(unsafe.Pointer(p)), atRecursive,
		uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a), 0)
	if errno != 0 {
		return errno
	}
	return nil
}
