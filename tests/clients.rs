//! Black-box: the client libraries in `clients/` against the binary Cargo
//! just built. Python's tests run under pytest and TypeScript's under
//! `node --test` (each starts its own servers); both packages are also
//! built as users install them (a wheel, an npm tarball), installed into
//! a clean place and imported. `scripts/test` installs what they need
//! (into `target/ci-venv` and `clients/typescript/node_modules`); without
//! it these tests fail, they never skip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_reviewloop");

/// The TypeScript tests and `npm pack` both compile into `dist/`: one at a time.
static TYPESCRIPT: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `program args` in `dir`, failing with its output unless it succeeds.
fn run(dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .env("REVIEWLOOP_BIN", BIN);
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (scripts/test installs it): {e}"));
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{program} {args:?} failed:\n{said}");
    said
}

#[test]
fn the_python_client_passes_its_tests_against_the_binary() {
    let python = repo().join("clients/python");
    let src = python.join("src");
    let said = run(
        &python,
        "python3",
        &["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        &[("PYTHONPATH", src.to_str().unwrap())],
    );
    assert!(said.contains(" passed"), "{said}");
    assert!(!said.contains("skipped"), "nothing may be skipped: {said}");
}

#[test]
fn the_python_package_builds_and_imports_from_its_wheel() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    run(
        &repo(),
        "python3",
        &["-m", "build", "--outdir", out, "clients/python"],
        &[],
    );
    let wheel = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("a wheel");
    assert!(std::fs::read_dir(dir.path()).unwrap().any(|e| e
        .unwrap()
        .path()
        .to_string_lossy()
        .ends_with(".tar.gz")));
    let site = dir.path().join("site");
    run(
        &repo(),
        "python3",
        &[
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            site.to_str().unwrap(),
            wheel.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        site.join("reviewloop/py.typed").exists(),
        "typed for checkers"
    );
    let said = run(
        dir.path(),
        "python3",
        &[
            "-c",
            "import reviewloop, reviewloop.webhooks; print(reviewloop.__version__, reviewloop.__file__)",
        ],
        &[("PYTHONPATH", site.to_str().unwrap())],
    );
    assert!(
        said.contains("0.1.0") && said.contains(site.to_str().unwrap()),
        "{said}"
    );
}

#[test]
fn the_typescript_client_passes_its_tests_against_the_binary() {
    let _one_at_a_time = TYPESCRIPT.lock().unwrap_or_else(|e| e.into_inner());
    let said = run(&repo().join("clients/typescript"), "npm", &["test"], &[]);
    assert!(said.contains("# pass"), "{said}");
    assert!(said.contains("# fail 0"), "{said}");
    assert!(said.contains("# skipped 0"), "{said}");
}

#[test]
fn the_npm_package_packs_installs_and_imports() {
    let _one_at_a_time = TYPESCRIPT.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    run(
        &repo().join("clients/typescript"),
        "npm",
        &["pack", "--silent", "--pack-destination", out],
        &[],
    );
    let tarball = dir.path().join("reviewloop-0.1.0.tgz");
    assert!(tarball.exists());
    let app = dir.path().join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(
        app.join("package.json"),
        r#"{"name": "app", "type": "module"}"#,
    )
    .unwrap();
    run(
        &app,
        "npm",
        &[
            "install",
            "--silent",
            "--no-audit",
            "--no-fund",
            tarball.to_str().unwrap(),
        ],
        &[],
    );
    assert!(app.join("node_modules/reviewloop/dist/index.d.ts").exists());
    let said = run(
        &app,
        "node",
        &[
            "-e",
            "import('reviewloop').then(m => console.log(typeof m.ReviewLoop, typeof m.verifyWebhook, typeof m.Rejected))",
        ],
        &[],
    );
    assert!(said.contains("function function function"), "{said}");
}
