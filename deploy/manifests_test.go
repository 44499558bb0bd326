// Package deploy holds what runs deadletter as a service — the systemd unit, the image builder, the Kubernetes
// manifests, Prometheus' rules and Alertmanager's routing — in a module of its own, so that the Kubernetes and
// registry libraries that check them never reach the deadletter binary.
package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/deploy/image"
	"github.com/deadletter/deadletter/deploy/promrule"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monitoringv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// manifest decodes one file of deploy/kubernetes into its Kubernetes API type, strictly: a misspelt or misplaced
// field (which kubectl apply would reject, or a server silently drop) fails.
func manifest(t *testing.T, file string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := promrule.Strict(b, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// Every file in deploy/kubernetes is one of the kinds below, decoded strictly, and they fit together: the
// Deployment runs the image's user with workload identity and no secret, its probes and ports match the watch's
// flags, the Service selects its pods under the job name the rules expect, the ServiceMonitor scrapes that
// Service's port, and everything is in one namespace.
func TestKubernetesManifests(t *testing.T) {
	var (
		ns  corev1.Namespace
		sa  corev1.ServiceAccount
		cm  corev1.ConfigMap
		dep appsv1.Deployment
		svc corev1.Service
		sm  monitoringv1.ServiceMonitor
		pr  monitoringv1.PrometheusRule
		amc monitoringv1alpha1.AlertmanagerConfig
	)
	kinds := map[string]any{"namespace.yaml": &ns, "serviceaccount.yaml": &sa, "configmap.yaml": &cm, "deployment.yaml": &dep,
		"service.yaml": &svc, "servicemonitor.yaml": &sm, "prometheusrule.yaml": &pr, "alertmanagerconfig.yaml": &amc}
	entries, err := os.ReadDir("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if kinds[e.Name()] == nil {
			t.Errorf("kubernetes/%s is not checked here: add it to the test", e.Name())
		}
	}
	for file, into := range kinds {
		manifest(t, file, into)
	}
	want := map[string][2]string{"namespace.yaml": {"v1", "Namespace"}, "serviceaccount.yaml": {"v1", "ServiceAccount"},
		"configmap.yaml": {"v1", "ConfigMap"}, "deployment.yaml": {"apps/v1", "Deployment"}, "service.yaml": {"v1", "Service"},
		"servicemonitor.yaml": {"monitoring.coreos.com/v1", "ServiceMonitor"}, "prometheusrule.yaml": {"monitoring.coreos.com/v1", "PrometheusRule"},
		"alertmanagerconfig.yaml": {"monitoring.coreos.com/v1alpha1", "AlertmanagerConfig"}}
	for file, meta := range map[string][2]string{"namespace.yaml": {ns.APIVersion, ns.Kind}, "serviceaccount.yaml": {sa.APIVersion, sa.Kind},
		"configmap.yaml": {cm.APIVersion, cm.Kind}, "deployment.yaml": {dep.APIVersion, dep.Kind}, "service.yaml": {svc.APIVersion, svc.Kind},
		"servicemonitor.yaml": {sm.APIVersion, sm.Kind}, "prometheusrule.yaml": {pr.APIVersion, pr.Kind}, "alertmanagerconfig.yaml": {amc.APIVersion, amc.Kind}} {
		if meta != want[file] {
			t.Errorf("%s is %v, want %v", file, meta, want[file])
		}
	}
	for file, n := range map[string]string{"serviceaccount.yaml": sa.Namespace, "configmap.yaml": cm.Namespace, "deployment.yaml": dep.Namespace,
		"service.yaml": svc.Namespace, "servicemonitor.yaml": sm.Namespace, "prometheusrule.yaml": pr.Namespace, "alertmanagerconfig.yaml": amc.Namespace} {
		if n != ns.Name {
			t.Errorf("%s is in namespace %q, not %q", file, n, ns.Name)
		}
	}

	// The pod: one replica, workload identity, the image's non-root user, nothing writable, no secret.
	pod := dep.Spec.Template
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 {
		t.Error("the watch runs one replica (two would double every read)")
	}
	sel, err := metaSelector(dep.Spec.Selector.MatchLabels)
	if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Deployment's selector %v does not match its pods %v", dep.Spec.Selector.MatchLabels, pod.Labels)
	}
	if pod.Labels["azure.workload.identity/use"] != "true" || pod.Spec.ServiceAccountName != sa.Name || sa.Annotations["azure.workload.identity/client-id"] == "" {
		t.Errorf("workload identity: pod label %q, service account %q (have %q), client-id %q",
			pod.Labels["azure.workload.identity/use"], pod.Spec.ServiceAccountName, sa.Name, sa.Annotations["azure.workload.identity/client-id"])
	}
	psc := pod.Spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != image.UID {
		t.Errorf("the pod must run as the image's user %d, non-root: %+v", image.UID, psc)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	csc := c.SecurityContext
	if csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation ||
		csc.Capabilities == nil || !slices.Contains(csc.Capabilities.Drop, "ALL") {
		t.Errorf("container security context: %+v", csc)
	}
	args := strings.Join(c.Args, " ")
	if len(c.Args) == 0 || c.Args[0] != "watch" || !strings.Contains(args, "--account-url=https://") || !strings.Contains(args, "--read-only") {
		t.Errorf("args %v: want watch --account-url=https://… --read-only", c.Args)
	}
	if regexp.MustCompile(`(?i)connection-string|AccountKey|sig=`).MatchString(args) || len(c.Env) > 0 || len(c.EnvFrom) > 0 {
		t.Errorf("the pod carries a secret or an environment: %v %v %v", c.Args, c.Env, c.EnvFrom)
	}
	m := regexp.MustCompile(`--metrics-addr=:(\d+)`).FindStringSubmatch(args)
	if m == nil || len(c.Ports) != 1 || strconv.Itoa(int(c.Ports[0].ContainerPort)) != m[1] || c.Ports[0].Name != "metrics" {
		t.Fatalf("the metrics port: args %v, ports %+v", c.Args, c.Ports)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "metrics" {
		t.Errorf("readiness must be /healthz on the metrics port: %+v", p)
	}
	hm := regexp.MustCompile(`--handlers=(\S+)`).FindStringSubmatch(args)
	if hm == nil || len(c.VolumeMounts) != 1 || filepath.Dir(hm[1]) != c.VolumeMounts[0].MountPath ||
		len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].ConfigMap == nil || pod.Spec.Volumes[0].ConfigMap.Name != cm.Name || cm.Data[filepath.Base(hm[1])] == "" {
		t.Errorf("--handlers must be the ConfigMap's file: args %v, mounts %+v, volumes %+v, data keys %v", c.Args, c.VolumeMounts, pod.Spec.Volumes, cm.Data)
	}

	// The Service and the ServiceMonitor: the job Prometheus gives the scrape is the Service's name, which the
	// DeadletterWatchDown rule names.
	ssel, _ := metaSelector(svc.Spec.Selector)
	if !ssel.Matches(labels.Set(pod.Labels)) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("the Service does not reach the pod's metrics port: %+v", svc.Spec)
	}
	job := regexp.MustCompile(`up\{job="([^"]+)"\}`)
	for _, r := range pr.Spec.Groups[0].Rules {
		if jm := job.FindStringSubmatch(r.Expr.String()); jm != nil && jm[1] != svc.Name {
			t.Errorf("%s watches job %q, but the ServiceMonitor's job is the Service's name %q", r.Alert, jm[1], svc.Name)
		}
	}
	msel, _ := metaSelector(sm.Spec.Selector.MatchLabels)
	if !msel.Matches(labels.Set(svc.Labels)) || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("the ServiceMonitor does not scrape the Service: %+v", sm.Spec)
	}

	// The Alertmanager route: grouped by context and alert, routed on severity, inhibited while the watch is down.
	r := amc.Spec.Route
	if r == nil || !slices.Equal(r.GroupBy, []string{"context", "alertname"}) || len(r.Routes) == 0 || len(amc.Spec.InhibitRules) != 1 ||
		amc.Spec.InhibitRules[0].SourceMatch[0].Value != "DeadletterWatchDown" {
		t.Errorf("AlertmanagerConfig: %+v", amc.Spec)
	}
	routes, err := r.ChildRoutes()
	if err != nil {
		t.Fatal(err)
	}
	receivers := map[string]bool{}
	for _, rc := range amc.Spec.Receivers {
		receivers[rc.Name] = true
	}
	severity := false
	for _, cr := range append(routes, *r) {
		if !receivers[cr.Receiver] {
			t.Errorf("route to %q, which is not a receiver", cr.Receiver)
		}
		for _, m := range cr.Matchers {
			severity = severity || m.Name == "severity"
		}
	}
	if !severity {
		t.Error("no route on severity")
	}
}

func metaSelector(m map[string]string) (labels.Selector, error) {
	return labels.ValidatedSelectorFromSet(m)
}

// The PrometheusRule is rules.yml, generated: regenerate it after editing the rules (`go run ./cmd/prometheusrule
// prometheus/rules.yml > kubernetes/prometheusrule.yaml`); test.sh diffs the command's output too.
func TestPrometheusRuleIsGenerated(t *testing.T) {
	rules, err := os.ReadFile(filepath.Join("prometheus", "rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := promrule.Generate(rules)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("kubernetes", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("kubernetes/prometheusrule.yaml differs from what rules.yml generates: run go run ./cmd/prometheusrule prometheus/rules.yml > kubernetes/prometheusrule.yaml (in deploy/)")
	}
	// The same rules, alert by alert.
	var from struct {
		Groups []struct {
			Rules []map[string]any `json:"rules"`
		} `json:"groups"`
	}
	yaml.Unmarshal(rules, &from)
	var pr monitoringv1.PrometheusRule
	if err := promrule.Strict(got, &pr); err != nil {
		t.Fatal(err)
	}
	if len(pr.Spec.Groups) != 1 || len(pr.Spec.Groups[0].Rules) != len(from.Groups[0].Rules) || len(from.Groups[0].Rules) < 10 {
		t.Fatalf("%d groups; rules %d in the PrometheusRule", len(pr.Spec.Groups), len(from.Groups[0].Rules))
	}
	for i, r := range pr.Spec.Groups[0].Rules {
		f := from.Groups[0].Rules[i]
		if r.Alert != f["alert"] || r.Expr.String() != f["expr"] || string(*r.For) != f["for"] || r.Annotations["runbook"] == "" {
			t.Errorf("rule %d: %s %q for %v, rules.yml has %v", i, r.Alert, r.Expr.String(), r.For, f)
		}
	}
	// A field the PrometheusRule cannot carry is an error, never a rule quietly dropped.
	if _, err := promrule.Generate([]byte("groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: up\n        severity: page\n")); err == nil {
		t.Error("an unknown field in a rule was accepted")
	}
}
