//! A `wasi:http/proxy` component that answers every request with
//! `hello, world!`: the `wasmtime serve` side of the request-overhead
//! benchmark. Run with: `wasmtime serve http_hello.wasm`.

use wasip2::http::types::{
    Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam,
};

#[cfg_attr(not(target_family = "wasm"), allow(dead_code))]
struct Hello;

impl wasip2::exports::http::incoming_handler::Guest for Hello {
    fn handle(_request: IncomingRequest, out: ResponseOutparam) {
        let response = OutgoingResponse::new(Fields::new());
        let Ok(body) = response.body() else { return };
        ResponseOutparam::set(out, Ok(response));
        if let Ok(stream) = body.write() {
            let _ = stream.blocking_write_and_flush(b"hello, world!\n");
        }
        let _ = OutgoingBody::finish(body, None);
    }
}

// The export names the component's `wasi:http` handler, a symbol only a
// wasm target can carry: a native build of the workspace (`cargo build
// --release` at its root) compiles the crate without it.
#[cfg(target_family = "wasm")]
wasip2::http::proxy::export!(Hello);
