package main

import (
	"context"
	"errors"
)

func runQgen(ctx context.Context, e *env, args []string) error {
	return errors.New("not yet")
}
