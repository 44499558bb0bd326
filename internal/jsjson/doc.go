// Package jsjson reproduces, byte for byte, what a JavaScript runtime (Node/V8) does with a JSON blob:
// Buffer.toString("utf8"), then JSON.parse, then JSON.stringify of parts of the result.
//
// The estate that deadletter predicts is a JavaScript function, so encoding/json is the wrong oracle: it
// rejects lone-surrogate escapes, replaces invalid UTF-8 byte by byte, keeps the first of duplicate keys in
// some paths, orders object members differently and formats numbers differently. Everything here follows the
// ECMAScript and WHATWG algorithms instead, and the tests check it against a real node process.
//
// Strings are Go strings in WTF-8 (generalized UTF-8): a JavaScript string may hold an unpaired UTF-16
// surrogate, which has no UTF-8 encoding, so such a unit is kept as its 3-byte generalized encoding
// (ED A0 80 .. ED BF BF). Paired surrogates are always combined into the normal 4-byte encoding, which keeps
// the representation canonical: two JavaScript strings are equal exactly when their WTF-8 bytes are.
//
// Nothing in this package recurses over the input: JSON.parse has no depth limit and blobs may be nested tens
// of millions of levels deep, so every walk keeps its stack on the heap.
package jsjson
