//! The arguments of an MCP tool call never panic the server: any bytes are
//! parsed as any tool's arguments (accepted, or refused with a message),
//! and `read`'s line window and result cut take any document and any
//! numbers. The first byte picks the tool; a NUL separates the arguments'
//! JSON from the document.
#![no_main]

use libfuzzer_sys::fuzz_target;

const TOOLS: [&str; 7] = ["sh", "run", "read", "grep", "list", "stat", "nope"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let tool = TOOLS[usize::from(pick) % TOOLS.len()];
    let split = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
    let (arguments, document) = rest.split_at(split);
    let cap = usize::from(pick) * 7;
    let _parsed = vfsbox_host::fuzzing::mcp_call(tool, arguments, document, cap);
});
