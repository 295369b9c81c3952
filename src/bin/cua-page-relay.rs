//! `cua-page-relay MODE DIR PROGRAM [ARGS...]`: starts a browser, holds its debugging endpoint and serves
//! it on a Unix socket in DIR that only this user can open (`cua::web::relay`).
//! launch_app starts it in a browser's place; it ends with the browser, with its exit code.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match cua::web::relay::run(&args) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("cua-page-relay: {e}");
            std::process::exit(2);
        }
    }
}
