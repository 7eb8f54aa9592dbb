//! Prints the GPU adapter the GPU tests ran on, or that they were skipped (run by
//! `scripts/test.sh` after `cargo test`, whose output hides the tests' own "skipped" lines).

fn main() {
    match pollster::block_on(attention_live::gpu::Gpu::new()) {
        Ok(g) => println!("GPU tests ran on: {}", g.name),
        Err(e) => println!("GPU tests skipped: no adapter ({e}). Install mesa-vulkan-drivers to run them."),
    }
}
