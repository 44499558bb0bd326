// Command prometheusrule writes the PrometheusRule generated from a Prometheus rules file to standard output:
//
//	go run ./cmd/prometheusrule prometheus/rules.yml > kubernetes/prometheusrule.yaml
package main

import (
	"fmt"
	"os"

	"github.com/deadletter/deadletter/deploy/promrule"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: prometheusrule RULES.yml > prometheusrule.yaml")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err == nil {
		b, err = promrule.Generate(b)
	}
	if err == nil {
		_, err = os.Stdout.Write(b)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "prometheusrule:", err)
		os.Exit(1)
	}
}
