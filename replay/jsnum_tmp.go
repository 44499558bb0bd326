package replay

import "strconv"

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
