package main

import (
	"context"
	"errors"
)

func runDashboard(ctx context.Context, g *globals, args []string, io stdio) (int, error) {
	return exitError, errors.New("the dashboard is not built yet")
}
