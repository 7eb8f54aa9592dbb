//! Prints the GPU adapter the GPU tests ran on (run by `scripts/test.sh` after `cargo test`, whose
//! output hides the tests' own lines), or that there is none: then the GPU tests failed under the
//! test command's `REQUIRE_GPU`, or, run without it, passed over their GPU part.

fn main() {
    match pollster::block_on(attention_live::gpu::Gpu::new()) {
        Ok(g) => println!("GPU tests ran on: {}", g.name),
        Err(e) => println!("no GPU adapter ({e}): install mesa-vulkan-drivers to run the GPU tests."),
    }
}
