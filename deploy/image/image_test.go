package image

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image, built from a real static build of deadletter and read back from its OCI layout as a registry or a
// runtime would: an OCI manifest for linux, one layer with the binary and the CA bundle, a non-root user, the
// binary as entrypoint — and the binary taken out of the layer runs. (No Docker daemon or registry here: the
// image is never run by a container runtime.)
func TestImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "deadletter")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.buildVersion=v0.0.0-test", "-o", bin, "./cmd/deadletter")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644)

	img, err := Build(Options{Binary: bin, CABundle: ca, Version: "v0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "oci")
	if err := Write(out, "v0.0.0-test", img); err != nil {
		t.Fatal(err)
	}

	ii, err := layout.ImageIndexFromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	im, err := ii.IndexManifest()
	if err != nil || len(im.Manifests) != 1 || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v0.0.0-test" {
		t.Fatalf("index: %+v %v", im, err)
	}
	got, err := ii.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := got.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s", mt)
	}
	cf, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || c.User != User || strings.HasPrefix(c.User, "0") ||
		len(c.Entrypoint) != 1 || c.Entrypoint[0] != Binary || c.Cmd[0] != "watch" || c.Labels["org.opencontainers.image.version"] != "v0.0.0-test" {
		t.Fatalf("config: %s/%s %+v", cf.OS, cf.Architecture, c)
	}
	if _, ok := c.ExposedPorts[MetricsPort]; !ok {
		t.Errorf("no exposed %s: %v", MetricsPort, c.ExposedPorts)
	}
	layers, err := got.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v): the base is empty, one layer is the image", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*tar.Header{}
	extracted := filepath.Join(dir, "from-the-layer")
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
		if "/"+h.Name == Binary {
			f, _ := os.OpenFile(extracted, os.O_CREATE|os.O_WRONLY, 0o755)
			io.Copy(f, tr)
			f.Close()
		}
	}
	if h := files[Binary[1:]]; h == nil || h.Mode&0o111 == 0 {
		t.Fatalf("no executable %s in the layer: %v", Binary, files)
	}
	if files[CABundle[1:]] == nil {
		t.Fatalf("no %s in the layer: Azure's TLS would fail", CABundle)
	}
	if len(files) != 5 {
		t.Errorf("the layer holds %d entries, want the binary, the bundle and their 3 directories", len(files))
	}
	// The binary in the image is the build, and it runs on its own (static: the empty base has no libc).
	if runtime.GOOS == "linux" {
		v, err := exec.Command(extracted, "version").Output()
		if err != nil || !strings.HasPrefix(string(v), "deadletter version v0.0.0-test") {
			t.Fatalf("the image's binary: %q %v", v, err)
		}
	}

	// Built twice, the same image: dates are fixed, so a rebuild of the same binary does not change the digest.
	again, err := Build(Options{Binary: bin, CABundle: ca, Version: "v0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same binary: %s and %s", d1, d2)
	}
	// A CA file with no certificate in it would leave the image unable to reach Azure.
	if _, err := Build(Options{Binary: bin, CABundle: filepath.Join(dir, "oci", "oci-layout")}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a CA bundle without certificates: %v", err)
	}
}

// What the empty base cannot run is refused at build time, not when the pod starts.
func TestImageRefusesWhatCannotRun(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644)
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	cases := map[string]Options{
		"a script": {Binary: script, CABundle: ca},
	}
	if dyn, err := exec.LookPath("sh"); err == nil && runtime.GOOS == "linux" {
		if real, err := filepath.EvalSymlinks(dyn); err == nil {
			if _, err := staticLinux(real); err != nil && strings.Contains(err.Error(), "dynamically linked") {
				cases["a dynamic binary"] = Options{Binary: real, CABundle: ca}
			}
		}
	}
	for label, o := range cases {
		if _, err := Build(o); err == nil {
			t.Errorf("%s: built", label)
		}
	}
}
