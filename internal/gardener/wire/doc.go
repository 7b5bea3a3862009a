// Package wire decodes Gardener's shoots and credentials bindings as the API
// server sends them, in JSON or protobuf, reading only the few fields
// decisions need and skipping the rest: list pages as they stream in
// (ReadPage), single objects (DecodeObject) and watch streams
// (NewEventReader, DecodeStatus). It knows nothing of requests, retries or
// caches; the API client and its watch (internal/gardener) and the export
// files (internal/gardener/exportfile) read through it, so every source
// decodes alike.
//
// Decoding is a package of its own because it is self-contained: its
// scanner, protobuf reader and items share many small unexported helpers,
// and none of them needs the client, while its tests and fuzz targets
// (FuzzScannerAgreesWithTheReference, FuzzDecodeProtobuf) run without any
// API server. What the rest needs of it is the handful of names above,
// the items (ShootItem, BindingItem) and the wire format (Format, FormatOf,
// ReadContentTypes and the Content-Type recorder of format.go).
//
// Files: scan.go is the streaming JSON scanner; items.go names each kind's
// members and what an item means (Shoot, Binding); page.go reads a list
// page; protobuf.go, protobuf_items.go and protobuf_page.go are the protobuf
// twins; events.go reads a watch stream; format.go tells the encoding of a
// response.
package wire
