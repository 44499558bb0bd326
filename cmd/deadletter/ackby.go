package main

import (
	"os"
	"os/user"
)

// defaultAckBy is who acknowledges when nobody says: the user, and the host it was given from (user@host).
func defaultAckBy() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return name + "@" + h
	}
	return name
}
