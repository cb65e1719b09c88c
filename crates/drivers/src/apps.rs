//! The application drivers (`tahoe`, `tls`, `tunnel`) behind one interface ([`Driver`]):
//! each runs its study and hands back items, which one ending stores, prints and writes.

use crate::{openvpn_server, tahoe, tls, tunnel};
use anyhow::Result;
use cryptoscope_engine::context::Ctx;
use cryptoscope_engine::stored::open_app_store;
use cryptoscope_engine::ui::usage;
use cryptoscope_engine::util;
use cryptoscope_measure::clock::{Clock, ClockChoice};
use cryptoscope_model::{RunFile, SCHEMA};
use std::path::PathBuf;

/// What an application driver (tahoe, tls, tunnel) hands over to be stored.
pub(crate) struct AppRun {
    /// The driver's name: the run's suite and the key of its renderings.
    pub(crate) suite: &'static str,
    pub(crate) algorithms: Vec<String>,
    pub(crate) quick: bool,
    pub(crate) rounds: usize,
    /// Extra library versions for the environment record.
    pub(crate) libraries: Vec<(String, String)>,
    pub(crate) items: Vec<cryptoscope_model::AppResult>,
}

/// Stores an application run (one transaction per item, like `run`), then prints the
/// driver's summary of its items (`cryptoscope_report::apps`), writes `json` if asked, and
/// says where the run went. Returns `code`, or 2 when the results could not be stored.
pub(crate) fn finish_app_run(
    ctx: &Ctx,
    store: &mut cryptoscope_store::Store,
    run_id: &str,
    started_at: String,
    app: AppRun,
    json: Option<(PathBuf, serde_json::Value)>,
    code: i32,
) -> Result<i32> {
    let driver = app.suite;
    let clock = Clock::new(ClockChoice::Auto);
    let mut env = cryptoscope_measure::env::capture(clock.tsc_hz(), clock.perf_status());
    env.libraries.extend(app.libraries);
    let run_file = RunFile {
        schema: SCHEMA.into(),
        run_id: run_id.to_string(),
        started_at,
        finished_at: util::now_utc().0,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command: cryptoscope_model::RecordedCommand::new(ctx.args.iter()),
        config: cryptoscope_model::RunConfig {
            suites: vec![app.suite.into()],
            algorithms: app.algorithms,
            quick: app.quick,
            rounds: app.rounds,
            ..Default::default()
        },
        environment: env,
        results: Vec::new(),
        applications: app.items,
    };
    let stored = store
        .begin_run(&run_file)
        .and_then(|_| {
            run_file
                .applications
                .iter()
                .try_for_each(|i| store.add_app_result(run_id, i))
        })
        .and_then(|_| store.finish_run(run_id, &run_file.finished_at));
    if let Some(r) = cryptoscope_report::apps::rendering(driver) {
        out!(ctx, "{}", (r.summary)(&run_file.applications));
    }
    if let Some((p, v)) = json {
        std::fs::write(&p, serde_json::to_string_pretty(&v)?)
            .map_err(|e| usage(format!("cannot write {}: {e}", p.display())))?;
        outln!(ctx, "JSON:    {}", p.display());
    }
    match stored {
        Ok(()) => outln!(
            ctx,
            "Store:   {} (run {run_id}; `cryptoscope report {run_id}`)",
            store.location()
        ),
        Err(e) => {
            errln!(ctx, "error: results not stored: {e}");
            return Ok(2);
        }
    }
    Ok(code)
}

/// What a driver's run hands back: the items and what the run record says about them, the
/// JSON file's content, and the exit code (1: the study did not complete).
pub struct DriverRun {
    pub(crate) app: AppRun,
    pub(crate) json: serde_json::Value,
    pub(crate) code: i32,
    /// Said on stderr when the code is 1.
    pub(crate) incomplete: Option<&'static str>,
}

/// An application driver: a study of cryptography inside a protocol (TLS, tunnels,
/// Tahoe-LAFS), which reports items rather than (subject, operation) rows. Its command is
/// [`cmd_driver`]; its renderings are `cryptoscope_report::apps::DRIVERS`.
pub trait Driver {
    /// Its name: the subcommand, the run's suite, the key of its items and renderings.
    const NAME: &'static str;
    /// The results database (`--db`) and the JSON file (`--json`) asked for.
    fn outputs(&self) -> (Option<&str>, Option<&PathBuf>);
    /// Runs the study. `None`: it stopped before anything worth storing (it said why): exit 2.
    fn run(&self, ctx: &Ctx) -> Result<Option<DriverRun>>;
}

/// A driver's command: the store opened first (a bad `--db` fails before any work), the
/// study, then one ending for every driver ([`finish_app_run`]).
pub fn cmd_driver<D: Driver>(d: &D, ctx: &Ctx) -> Result<i32> {
    let (db, json) = d.outputs();
    let (mut store, json_out) = open_app_store(ctx, db, json)?;
    let (started_at, _) = util::now_utc();
    let run_id = util::run_id();
    let Some(mut r) = d.run(ctx)? else {
        return Ok(2);
    };
    r.app.suite = D::NAME;
    let code = finish_app_run(
        ctx,
        &mut store,
        &run_id,
        started_at,
        r.app,
        json_out.map(|p| (p, r.json)),
        r.code,
    )?;
    if let (1, Some(why)) = (code, r.incomplete) {
        errln!(ctx, "error: {why}");
    }
    Ok(code)
}

impl Driver for tahoe::TahoeArgs {
    const NAME: &'static str = "tahoe";

    fn outputs(&self) -> (Option<&str>, Option<&PathBuf>) {
        (self.db.as_deref(), self.json.as_ref())
    }

    fn run(&self, ctx: &Ctx) -> Result<Option<DriverRun>> {
        let (output, code) = tahoe::run_driver(self, ctx)?;
        if code == 2 {
            return Ok(None);
        }
        let items = cryptoscope_report::tahoe::items(&output).map_err(|e| anyhow::anyhow!(e))?;
        let app = AppRun {
            suite: Self::NAME,
            algorithms: output["hashes"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default(),
            quick: self.profile == "quick",
            rounds: self.repeat as usize,
            libraries: vec![
                (
                    "tahoe-lafs".into(),
                    output["tahoe_version"].as_str().unwrap_or("?").into(),
                ),
                ("python".into(), output["python"].as_str().unwrap_or("?").into()),
            ],
            items,
        };
        Ok(Some(DriverRun {
            app,
            json: output,
            code,
            incomplete: Some("the study did not complete (see above); what was measured is stored"),
        }))
    }
}

impl Driver for tls::TlsArgs {
    const NAME: &'static str = "tls";

    fn outputs(&self) -> (Option<&str>, Option<&PathBuf>) {
        (self.db.as_deref(), self.json.as_ref())
    }

    fn run(&self, ctx: &Ctx) -> Result<Option<DriverRun>> {
        let (setup, rows, code) = tls::run(self, ctx)?;
        let app = AppRun {
            suite: Self::NAME,
            algorithms: rows.iter().map(|r| r.group.clone()).collect(),
            quick: self.quick,
            rounds: 0,
            libraries: Vec::new(),
            items: cryptoscope_report::tls::items(&setup, &rows),
        };
        let json = serde_json::json!({"setup": setup, "rows": rows});
        Ok(Some(DriverRun {
            app,
            json,
            code,
            incomplete: None,
        }))
    }
}

impl Driver for tunnel::TunnelArgs {
    const NAME: &'static str = "tunnel";

    fn outputs(&self) -> (Option<&str>, Option<&PathBuf>) {
        (self.db.as_deref(), self.json.as_ref())
    }

    fn run(&self, ctx: &Ctx) -> Result<Option<DriverRun>> {
        let (setup, rows, code) = tunnel::run(self, ctx)?;
        let app = AppRun {
            suite: Self::NAME,
            algorithms: self.tunnel.split(',').map(|s| s.trim().to_string()).collect(),
            quick: self.quick,
            rounds: 0,
            libraries: Vec::new(),
            items: cryptoscope_report::tunnel::items(&setup, &rows),
        };
        let json = serde_json::json!({"setup": setup, "rows": rows});
        Ok(Some(DriverRun {
            app,
            json,
            code,
            incomplete: None,
        }))
    }
}

impl Driver for openvpn_server::OpenvpnServerArgs {
    const NAME: &'static str = cryptoscope_model::apps::openvpn::DRIVER;

    fn outputs(&self) -> (Option<&str>, Option<&PathBuf>) {
        (self.db.as_deref(), self.json.as_ref())
    }

    fn run(&self, ctx: &Ctx) -> Result<Option<DriverRun>> {
        let (setup, rows, code) = openvpn_server::run(self, ctx)?;
        let app = AppRun {
            suite: Self::NAME,
            algorithms: self
                .rsa
                .split(',')
                .map(|s| format!("rsa-{}", s.trim().trim_start_matches("rsa-")))
                .collect(),
            quick: self.quick,
            rounds: 0,
            libraries: vec![("openvpn".into(), setup.software.clone())],
            items: cryptoscope_report::openvpn::items(&setup, &rows),
        };
        let json = serde_json::json!({"setup": setup, "rows": rows});
        Ok(Some(DriverRun {
            app,
            json,
            code,
            incomplete: None,
        }))
    }
}
