package dirstore

import (
	"os"

	"golang.org/x/sys/unix"
)

const canFlush = true

func flush(root string) error {
	f, err := os.Open(root)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
