// Command image builds deadletter's container image as an OCI image layout, with no Docker daemon:
//
//	CGO_ENABLED=0 GOOS=linux go build -trimpath -o deadletter ./cmd/deadletter     # in the repository's root
//	cd deploy && go run ./cmd/image -binary ../deadletter -out ../deadletter-oci -tag v1.0.0
//	crane push ../deadletter-oci registry.example/deadletter:v1.0.0   # or skopeo copy oci:../deadletter-oci:v1.0.0 docker://…
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/deadletter/deadletter/deploy/image"
)

func main() {
	bin := flag.String("binary", "", "a static Linux build of deadletter (CGO_ENABLED=0 GOOS=linux)")
	ca := flag.String("ca", "/etc/ssl/certs/ca-certificates.crt", "the CA certificates the image trusts (PEM)")
	out := flag.String("out", "deadletter-oci", "the OCI image layout directory to write (or add to)")
	tag := flag.String("tag", "latest", "the tag (the layout's ref.name, and the version label)")
	flag.Parse()
	if *bin == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	img, err := image.Build(image.Options{Binary: *bin, CABundle: *ca, Version: *tag})
	if err == nil {
		err = image.Write(*out, *tag, img)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	d, _ := img.Digest()
	fmt.Printf("wrote %s:%s (%s) to %s\n", "deadletter", *tag, d, *out)
}
