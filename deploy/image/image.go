// Package image builds deadletter's container image without a Docker daemon or a base image: one layer on an
// empty base holding the static binary and the CA certificates it needs to reach Azure over HTTPS, run as a
// non-root user. go-containerregistry writes it as an OCI image layout, which crane, skopeo or oras push.
package image

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the user and group the image runs as (distroless' nonroot): the Kubernetes manifest's runAsUser.
const (
	UID  = 65532
	User = "65532:65532"
	// Binary is the path of deadletter in the image, its entrypoint.
	Binary = "/deadletter"
	// CABundle is where Go's crypto/x509 looks first on Linux.
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
	// MetricsPort is where the default command serves /metrics and /healthz.
	MetricsPort = "9464/tcp"
)

// epoch dates every file and the image itself: the same binary and certificates make the same image, byte for byte.
var epoch = time.Unix(0, 0).UTC()

// Options say what goes in.
type Options struct {
	Binary   string // a static Linux build of deadletter: CGO_ENABLED=0 GOOS=linux go build ./cmd/deadletter
	CABundle string // PEM certificates to trust (the build host's /etc/ssl/certs/ca-certificates.crt)
	Version  string // the org.opencontainers.image.version label (optional)
}

// Build makes the image. It refuses a binary that is not a static Linux executable: on an empty base there is no
// dynamic loader or libc, and such a binary would fail only when the pod starts.
func Build(o Options) (v1.Image, error) {
	arch, err := staticLinux(o.Binary)
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(o.CABundle)
	if err != nil {
		return nil, fmt.Errorf("CA bundle: %w", err)
	}
	if !bytes.Contains(ca, []byte("-----BEGIN CERTIFICATE-----")) {
		return nil, fmt.Errorf("CA bundle %s holds no PEM certificate", o.CABundle)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"etc/", "etc/ssl/", "etc/ssl/certs/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		name string
		mode int64
		body []byte
	}{{CABundle[1:], 0o644, ca}, {Binary[1:], 0o755, bin}} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerBytes)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", arch, v1.Time{Time: epoch}
	labels := map[string]string{"org.opencontainers.image.source": "https://github.com/deadletter/deadletter",
		"org.opencontainers.image.title": "deadletter", "org.opencontainers.image.description": "deadletter watch: the Event Grid dead-letter container, for Prometheus"}
	if o.Version != "" {
		labels["org.opencontainers.image.version"] = o.Version
	}
	if bi, err := buildinfo.ReadFile(o.Binary); err == nil {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				labels["org.opencontainers.image.revision"] = s.Value
			}
		}
	}
	cf.Config = v1.Config{
		Entrypoint:   []string{Binary},
		Cmd:          []string{"watch", "--read-only", "--metrics-addr", ":9464"},
		User:         User,
		WorkingDir:   "/",
		Env:          []string{"SSL_CERT_FILE=" + CABundle},
		ExposedPorts: map[string]struct{}{MetricsPort: {}},
		Labels:       labels,
	}
	return mutate.ConfigFile(img, cf)
}

// Write puts the image in an OCI image layout at dir (created, or added to), tagged ref.
func Write(dir, ref string, img v1.Image) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref}),
		layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture}))
}

// staticLinux checks the binary is a Linux ELF executable with no dynamic loader, and says its architecture.
func staticLinux(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s is not a Linux executable (build with GOOS=linux): %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%s is dynamically linked: build it with CGO_ENABLED=0 (the image has no libc)", path)
		}
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	}
	return "", fmt.Errorf("%s is for %s: build for amd64 or arm64", path, f.Machine)
}
