// Package promrule turns deploy/prometheus/rules.yml into the Prometheus Operator's PrometheusRule, so the rules a
// cluster loads are the ones promtool tests, never a hand-kept copy.
package promrule

import (
	"bytes"
	"errors"
	"fmt"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Header starts the generated file.
const Header = `# GENERATED from deploy/prometheus/rules.yml by ` + "`go run ./cmd/prometheusrule prometheus/rules.yml`" + `
# (run in deploy/): do not edit. CI regenerates it and fails on any difference (test.sh).
`

// Namespace and Name are where the rule lives: beside the watch (deploy/kubernetes).
const (
	Namespace = "deadletter"
	Name      = "deadletter"
)

// Generate reads a Prometheus rules file — strictly: a field the PrometheusRule cannot carry is an error, not a
// rule silently dropped — and writes the PrometheusRule that holds the same groups.
func Generate(rules []byte) ([]byte, error) {
	var spec monitoringv1.PrometheusRuleSpec
	if err := Strict(rules, &spec); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	if len(spec.Groups) == 0 {
		return nil, fmt.Errorf("rules: no groups")
	}
	pr := monitoringv1.PrometheusRule{
		TypeMeta: metav1.TypeMeta{APIVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule"},
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: map[string]string{
			"app.kubernetes.io/name": "deadletter", "app.kubernetes.io/component": "alerting"}},
		Spec: spec,
	}
	b, err := yaml.Marshal(pr)
	if err != nil {
		return nil, err
	}
	// An empty ObjectMeta still says creationTimestamp: null; a manifest has none.
	b = bytes.Replace(b, []byte("  creationTimestamp: null\n"), nil, 1)
	return append([]byte(Header), b...), nil
}

// Strict decodes YAML into an API type the way the Kubernetes API server does: field names case-sensitive (Go's
// encoding/json would take readOnlyRootFileSystem for readOnlyRootFilesystem), unknown and duplicate fields errors.
func Strict(b []byte, into any) error {
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(j, into, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}
