//! `cua-page-relay DIR PROGRAM [ARGS...]`: starts a Chromium on a debugging pipe and serves
//! that pipe on a Unix socket in DIR that only this user can open (`cua::page::relay`).
//! launch_app starts it in Chromium's place; it ends with the browser, with its exit code.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match cua::page::relay::run(&args) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("cua-page-relay: {e}");
            std::process::exit(2);
        }
    }
}
