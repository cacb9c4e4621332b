package wal

import (
	"os"
	"syscall"
)

// fdatasync makes f's data durable, and its size, but not its timestamps:
// what an appended log needs, with one device flush.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
