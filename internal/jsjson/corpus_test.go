package jsjson

import (
	"math"
	"math/rand"
	"strconv"
)

// The corpus is shared by the node differential test, the Scan/Fields/Unquote property test and the fuzz seeds.
// It is generated from a fixed seed so that a failure reproduces.

var edgeNumbers = []string{
	"0", "-0", "1.0", "1E2", "1e+2", "1E-2", "-0.0", "0e10", "0E-0", "1e21", "1e-7", "1e-6", "1e20", "9.999999999999999e20",
	"1e400", "-1e400", "1e-400", "-1e-400", "5e-324", "4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
	"2.2250738585072014e-308", "2.2250738585072011e-308", "0.1", "0.3", "123456789012345678901", "12345678901234567890",
	"1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "-1.7976931348623157e308",
	"9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993", "18446744073709551615",
	"18446744073709551616", "0.000001", "0.0000001", "0.00000012345", "1.5e-7", "-1.2345e100", "100", "1e0", "1e-0",
	"123e-20", "4294967295", "4294967296", "0.1e1", "10.5", "-1.5", "3.141592653589793", "2.718281828459045",
	"0.30000000000000004", "1e23", "8.41e21", "5e-7", "1.0000000000000002", "0.9999999999999999", "1e-323", "1e308",
	"1e309", "72057594037927945", "4.35e-6", "1234567890123456789012345678901234567890e-30",
	"0.000000000000000000000000000000000000000000000000000000000000000000000000000000000001e80",
	"2.470328229206232720882538e-324", "1.00000000000000011102230246251565404236316680908203125",
	"1.00000000000000011102230246251565404236316680908203124", "1.00000000000000011102230246251565404236316680908203126",
}

var edgeEscapes = []string{
	`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\u00E9`, `\uD800`, `\udbff`, `\uDBFF\uDC00`, `\uDC00\uD800`,
	`\uD83D\uDE00`, `\ud83d\ude00`, `\uD83D`, `\uDE00`, `\uD800\uD800\uDC00`, `\u0000`, `\u001f`, `\u001F`, `\u007f`,
	`\u0080`, `\u2028`, `\u2029`, `\uFEFF`, `\uFFFD`, `\uFFFF`, `\u0022`, `\u005c`, `\u002F`, `\uD800x`, `\uDBFF\u0041`,
}

// rawPieces are literal bytes for string contents: valid UTF-8 of every length and every class of invalid
// sequence the WHATWG decoder distinguishes.
var rawPieces = []string{
	"a", "Z", " ", "/", "'", "\x7f", "é", "€", "😀", "\u2028", "\u2029", "\uFEFF", "\u00a0", "\u0085", "\uFFFD", "\uFFFF",
	"\U0010FFFF", "\xed\x9f\xbf", "\xee\x80\x80",
	"\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xc2", "\xc2\x41", "\xdf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xe0\xa0",
	"\xe2\x82\x41", "\xe2\x82", "\xed\xa0\x80", "\xed\xbf\xbf", "\xed\xa0\xbd\xed\xb8\x80", "\xef\xbf", "\xef",
	"\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf", "\xf0\x90\x80\x78", "\xf0\x90\x80", "\xf0\x90", "\xf4\x90\x80\x80",
	"\xf4\x8f\xbf\xbf", "\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80", "\xfe", "\xff", "\xc3\xa9\xa9", "\x80\x80\x80\x80",
}

var edgeKeys = []string{
	"0", "01", "1", "2", "10", "42", "4294967294", "4294967295", "4294967296", "-1", "-0", "1.0", "1e3", "__proto__",
	"", "a", "b", "id", "data", "constructor", "toString", "length", " 1", "1 ", "00", "9007199254740993",
	`\u0030`, `\u005f_proto__`, `\uD800`, `\uDBFF\uDC00`, "é", "\xff", "\xed\xa0\x80", "\u2028",
}

type gen struct {
	r   *rand.Rand
	buf []byte
}

func (g *gen) ws() {
	if g.r.Intn(5) != 0 {
		return
	}
	for n := g.r.Intn(3) + 1; n > 0; n-- {
		g.buf = append(g.buf, " \t\n\r"[g.r.Intn(4)])
	}
}

func (g *gen) number() {
	r := g.r
	switch r.Intn(7) {
	case 0, 1:
		g.buf = append(g.buf, edgeNumbers[r.Intn(len(edgeNumbers))]...)
	case 2:
		g.buf = strconv.AppendInt(g.buf, r.Int63n(1<<uint(r.Intn(62)+1))-r.Int63n(1<<20), 10)
	case 3: // random digits, fraction and exponent
		if r.Intn(3) == 0 {
			g.buf = append(g.buf, '-')
		}
		if r.Intn(3) == 0 {
			g.buf = append(g.buf, '0')
		} else {
			g.buf = append(g.buf, byte('1'+r.Intn(9)))
			for n := r.Intn(25); n > 0; n-- {
				g.buf = append(g.buf, byte('0'+r.Intn(10)))
			}
		}
		if r.Intn(2) == 0 {
			g.buf = append(g.buf, '.')
			for n := r.Intn(25) + 1; n > 0; n-- {
				g.buf = append(g.buf, byte('0'+r.Intn(10)))
			}
		}
		if r.Intn(2) == 0 {
			g.buf = append(g.buf, "eE"[r.Intn(2)])
			if s := r.Intn(3); s > 0 {
				g.buf = append(g.buf, "+-"[s-1])
			}
			g.buf = strconv.AppendInt(g.buf, int64(r.Intn(340)), 10)
		}
	default: // a random double written out in some Go format
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20))
		}
		g.buf = strconv.AppendFloat(g.buf, f, "egf"[r.Intn(3)], r.Intn(20)-1, 64)
	}
}

func (g *gen) stringContents() {
	r := g.r
	for n := r.Intn(8); n > 0; n-- {
		switch r.Intn(4) {
		case 0:
			g.buf = append(g.buf, edgeEscapes[r.Intn(len(edgeEscapes))]...)
		case 1:
			g.buf = append(g.buf, rawPieces[r.Intn(len(rawPieces))]...)
		case 2:
			g.buf = append(g.buf, `\u`...)
			g.buf = append(g.buf, []byte(strconv.FormatUint(uint64(r.Intn(0x10000))|0x10000, 16))[1:]...)
		default:
			for m := r.Intn(6) + 1; m > 0; m-- {
				c := byte(0x20 + r.Intn(0x5f))
				if c == '"' || c == '\\' {
					c = '_'
				}
				g.buf = append(g.buf, c)
			}
		}
	}
}

func (g *gen) str() {
	g.buf = append(g.buf, '"')
	g.stringContents()
	g.buf = append(g.buf, '"')
}

// value writes a random JSON value; the recursion is bounded by depth and lives only in test code.
func (g *gen) value(depth int) {
	r := g.r
	k := r.Intn(10)
	if depth <= 0 && k >= 6 {
		k = r.Intn(6)
	}
	switch k {
	case 0:
		g.buf = append(g.buf, [...]string{"null", "true", "false"}[r.Intn(3)]...)
	case 1, 2:
		g.number()
	case 3, 4, 5:
		g.str()
	case 6, 7:
		g.buf = append(g.buf, '[')
		g.ws()
		for i, n := 0, r.Intn(6); i < n; i++ {
			if i > 0 {
				g.buf = append(g.buf, ',')
				g.ws()
			}
			g.value(depth - 1)
			g.ws()
		}
		g.buf = append(g.buf, ']')
	default:
		g.buf = append(g.buf, '{')
		g.ws()
		var used []string
		for i, n := 0, r.Intn(7); i < n; i++ {
			if i > 0 {
				g.buf = append(g.buf, ',')
				g.ws()
			}
			switch {
			case len(used) > 0 && r.Intn(4) == 0: // a duplicate key
				g.buf = append(g.buf, '"')
				g.buf = append(g.buf, used[r.Intn(len(used))]...)
				g.buf = append(g.buf, '"')
			case r.Intn(2) == 0:
				k := edgeKeys[r.Intn(len(edgeKeys))]
				used = append(used, k)
				g.buf = append(g.buf, '"')
				g.buf = append(g.buf, k...)
				g.buf = append(g.buf, '"')
			default:
				start := len(g.buf)
				g.str()
				used = append(used, string(g.buf[start+1:len(g.buf)-1]))
			}
			g.ws()
			g.buf = append(g.buf, ':')
			g.ws()
			g.value(depth - 1)
			g.ws()
		}
		g.buf = append(g.buf, '}')
	}
}

var mutationBytes = []string{
	",", "]", "}", "[", "{", ":", `"`, `\`, " ", "\t", "\n", "\x00", "\x01", "\x1f", "\x7f", "\xff", "\xc2", "\xe2\x82",
	"\xef\xbb\xbf", "\u00a0", "\u2028", "0", "-", ".", "e", "+", "x", "u", "true", "nul", "//", "/*", "'",
}

// mutate breaks (usually) a valid document the way corrupt blobs are broken.
func (g *gen) mutate(b []byte) []byte {
	r := g.r
	out := append([]byte(nil), b...)
	for n := r.Intn(2) + 1; n > 0; n-- {
		pos := 0
		if len(out) > 0 {
			pos = r.Intn(len(out) + 1)
		}
		switch r.Intn(5) {
		case 0:
			if pos < len(out) {
				out = append(out[:pos], out[pos+1:]...)
			}
		case 1, 2:
			ins := mutationBytes[r.Intn(len(mutationBytes))]
			out = append(out[:pos], append([]byte(ins), out[pos:]...)...)
		case 3:
			out = out[:pos]
		default:
			if pos < len(out) {
				out[pos] = mutationBytes[r.Intn(len(mutationBytes))][0]
			}
		}
	}
	return out
}

// handwritten are inputs a random generator reaches rarely: every way JSON.parse refuses or surprisingly accepts.
var handwritten = []string{
	"", " ", "\t\n\r ", "\xef\xbb\xbf[]", "\xef\xbb\xbf", "\u00a01", "1\u00a0", "\v1", "\f1", "[1,]", "[,1]", "[1 2]",
	`{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{'a':1}`, `{1:1}`, `{"a":1 "b":2}`, "01", "-01", "00", "-", "-x",
	"+1", ".5", "1.", "1.x", "1e", "1e+", "1ex", "1E-", "0x10", "Infinity", "-Infinity", "NaN", "undefined", "tru",
	"trux", "nul", "nulll", "True", "[1]x", "[1] x", "[1]]", "{}}", `"abc`, `"\`, `"\q"`, `"\x41"`, `"\u12"`, `"\u12G4"`,
	`"\U0041"`, `"\'"`, "\"a\nb\"", "\"a\tb\"", "\"\x00\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\"", "\xff", "[\xff]",
	"{\"\xff\":1}", "\"\\\xff\"", "[1,2]/* c */", "// c\n1", `{"__proto__":{"x":1}}`, `{"__proto__":null,"a":1}`,
	`[[[[[[[[[[]]]]]]]]]]`, `{"a":{"b":{"c":{}}}}`, `{"b":1,"a":2,"1":3,"0":4}`, `{"a":1,"a":2,"a":3}`,
	`{"10":1,"9":2,"4294967294":3,"4294967295":4,"4294967296":5,"01":6,"1":7}`, `"\uD800\uDC00"`, `"\uDC00\uD800"`,
	`"\uD800"`, `"\uDFFF"`, `"\uD83D\uDE00\uD83D"`, "\"\xed\xa0\x80\"", "\"\xe2\x82\x41\"", "\"\xf0\x90\x80\x78\"",
	"\"\xc0\x80\"", "[1e400,-1e400,1e-400,-1e-400,-0,0.1,5e-324]", "123456789012345678901", "1e21", "1e-7",
	`"\/\b\f\n\r\t\"\\"`, "\"\u2028\u2029\"", "[\n1\r\n,\t2 ]", "[] ", " {} ", "[]\x00", "1 2", `"a" "b"`,
	"[\"a\",\"b\"\"c\"]", "{\"a\":1}\xef\xbb\xbf", "[-]", "[--1]", "[1e1.5]", "[.]", "[0.e1]", "[1.e1]", "[0e]",
}

// corpus returns n generated documents (about one in three mutated into something invalid) plus handwritten.
func corpus(seed int64, n int) [][]byte {
	g := &gen{r: rand.New(rand.NewSource(seed))}
	var out [][]byte
	for _, s := range handwritten {
		out = append(out, []byte(s))
	}
	for i := 0; i < n; i++ {
		g.buf = g.buf[:0]
		g.ws()
		g.value(g.r.Intn(6))
		g.ws()
		doc := append([]byte(nil), g.buf...)
		if g.r.Intn(3) == 0 {
			doc = g.mutate(doc)
		}
		out = append(out, doc)
	}
	return out
}
