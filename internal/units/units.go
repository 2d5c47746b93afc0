// Package units owns how colink prints quantities for people: byte counts in binary units.
package units

import "fmt"

// FormatBytes prints a byte count in the largest binary unit it reaches, with one decimal
// ("1.5 GiB", "512 B").
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
