//! The deployment files under `deploy/`: the Kubernetes manifests validated
//! offline against the Kubernetes schemas (`kubernetes-validate`, from
//! PyPI), their settings checked against each other and against the real
//! config parser, the container image definition, and the HAProxy config
//! checked by HAProxy itself. (The nginx config is run for real by the
//! fleet tests.)

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use vfsbox_host::config::Config;

fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(path)
}

/// Runs `python3 -c code args...`, installing `package` for the current
/// user first if `module` is missing.
fn python(module: &str, package: &str, code: &str, args: &[&Path]) -> std::process::Output {
    crate::common::python_package(module, package);
    Command::new("python3")
        .args(["-c", code])
        .args(args)
        .output()
        .expect("python3 runs")
}

fn validate(file: &Path) -> std::process::Output {
    python(
        "kubernetes_validate",
        "kubernetes-validate==1.37.0",
        "import sys; from kubernetes_validate.__main__ import main; sys.argv[0] = 'kubernetes-validate'; sys.exit(main())",
        &[Path::new("--strict"), Path::new("--quiet"), file],
    )
}

/// The manifests' documents, as JSON.
fn manifests() -> Vec<Value> {
    let out = python(
        "yaml",
        "pyyaml",
        "import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))",
        &[&deploy("kubernetes/vfsbox.yaml")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn kind<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in the manifests"))
}

#[test]
fn the_kubernetes_manifests_pass_strict_validation_against_the_kubernetes_schemas() {
    let file = deploy("kubernetes/vfsbox.yaml");
    let out = validate(&file);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The validator does fail a manifest with a misspelt field.
    let text = std::fs::read_to_string(&file).expect("manifests");
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        text.replace("readOnlyRootFilesystem", "readOnlyRootFilesytem"),
    )
    .expect("write");
    assert!(!validate(&bad).status.success(), "a misspelt field passed");
}

#[test]
fn the_deployment_probes_readiness_and_liveness_and_outlasts_the_drain() {
    let docs = manifests();
    for kind_name in [
        "ConfigMap",
        "Secret",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
    ] {
        kind(&docs, kind_name);
    }
    let config_text = kind(&docs, "ConfigMap")["data"]["vfsbox.toml"]
        .as_str()
        .expect("vfsbox.toml in the ConfigMap");
    // The real parser takes the shipped config.
    let config = Config::parse(config_text).expect("the ConfigMap's vfsbox.toml");
    let grace = config.server.drain_grace.expect("a drain grace period");
    assert!(
        grace > config.limits.deadline,
        "the drain outlasts a script's deadline"
    );

    let pod = &kind(&docs, "Deployment")["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    let pre_stop = container["lifecycle"]["preStop"]["sleep"]["seconds"]
        .as_u64()
        .expect("a preStop pause");
    let termination = pod["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("a grace period");
    assert!(
        termination > pre_stop + grace.as_secs(),
        "the kubelet would kill a draining pod: {termination} s <= {pre_stop} s + {grace:?}"
    );
    // Non-root on a read-only root filesystem; the compile cache is a
    // volume at XDG_CACHE_HOME.
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(
        container["securityContext"]["allowPrivilegeEscalation"],
        false
    );
    let cache = container["env"]
        .as_array()
        .and_then(|env| env.iter().find(|e| e["name"] == "XDG_CACHE_HOME"))
        .expect("XDG_CACHE_HOME")["value"]
        .clone();
    assert!(
        container["volumeMounts"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["mountPath"] == cache)),
        "the compile cache is not a volume"
    );
    // The S3 credentials come from the Secret, not the config.
    assert_eq!(container["envFrom"][0]["secretRef"]["name"], "vfsbox");
    assert!(!config_text.contains("AWS_SECRET"));
    // The autoscaler scales on the gauge /metrics serves.
    let hpa = &kind(&docs, "HorizontalPodAutoscaler")["spec"];
    assert_eq!(
        hpa["metrics"][0]["pods"]["metric"]["name"],
        "vfsbox_live_scripts"
    );
}

#[test]
fn the_container_image_ships_the_binary_alone_as_a_non_root_user() {
    let text = std::fs::read_to_string(deploy("Dockerfile")).expect("deploy/Dockerfile");
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let stages = lines.iter().filter(|l| l.starts_with("FROM ")).count();
    assert!(stages >= 2, "a multi-stage build");
    let last = lines
        .iter()
        .rposition(|l| l.starts_with("FROM "))
        .expect("a FROM");
    let runtime = &lines[last..];
    let copies: Vec<&&str> = runtime.iter().filter(|l| l.starts_with("COPY ")).collect();
    assert_eq!(
        copies.len(),
        1,
        "the runtime stage copies the binary only: {copies:?}"
    );
    assert!(copies[0].contains("--from=build") && copies[0].ends_with("/usr/local/bin/vfsbox"));
    assert!(
        !runtime.iter().any(|l| l.starts_with("RUN ")),
        "nothing runs in the runtime stage"
    );
    let user = runtime
        .iter()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("a USER");
    assert!(
        !user.starts_with("root") && !user.starts_with('0'),
        "{user}"
    );
}

/// HAProxy's version as (major, minor).
pub(crate) fn haproxy_version(binary: &Path) -> (u32, u32) {
    let out = Command::new(binary).arg("-v").output().expect("haproxy -v");
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text
        .split_whitespace()
        .nth(2)
        .expect("HAProxy version X.Y...");
    let mut parts = version.split(['.', '-']).map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[test]
fn the_haproxy_config_passes_haproxys_own_check() {
    let Some(binary) =
        crate::common::system_tool(&["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], "haproxy")
    else {
        return;
    };
    let file = deploy("haproxy/haproxy.cfg");
    let mut text = std::fs::read_to_string(&file).expect("haproxy.cfg");
    assert!(text.contains("retry-on conn-failure empty-response 429 503"));
    // `retry-on 429` came with HAProxy 3.1; an older one (Debian 12 ships
    // 2.6) checks the rest of the file.
    if haproxy_version(&binary) < (3, 1) {
        text = text.replace(" 429 503", " 503");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let checked = dir.path().join("haproxy.cfg");
    std::fs::write(&checked, text).expect("write");
    let out = Command::new(&binary)
        .arg("-c")
        .arg("-f")
        .arg(&checked)
        .output()
        .expect("haproxy -c");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
