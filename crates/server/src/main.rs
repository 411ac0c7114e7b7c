//! The `reviewloop` binary.

use std::process::ExitCode;

use reviewloop::cli::Cli;

fn main() -> ExitCode {
    let cli = match Cli::try_parse_words(std::env::args_os()) {
        Ok(cli) => cli,
        // --help and --version end here too, with exit code 0.
        Err(error) => error.exit(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("reviewloop: error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(reviewloop::run(cli));
    // A blocking task may still run (a connection attempt to a database
    // that does not answer, when a signal stopped the wait for it): the
    // process ends without waiting for it.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("reviewloop: error: {}", one_line(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, each said once: a cause whose
/// words its error already repeats is not said again.
fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
