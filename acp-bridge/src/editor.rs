//! The interactive client's prompt line: rustyline (history, editing) on a
//! thread of its own, since it blocks, asked for one line at a time over a
//! channel. While no line is asked for, the terminal is the turn's: the
//! agent's output is printed and Ctrl-C is a signal (`session/cancel`);
//! while a line is read, the terminal is in raw mode and Ctrl-C is a key.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;

use rustyline::error::ReadlineError;
use rustyline::{
    Cmd, ConditionalEventHandler, Event, EventContext, EventHandler, KeyEvent, RepeatCount,
};
use tokio::sync::oneshot;

/// What the user did at the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A line (Enter).
    Line(String),
    /// Ctrl-C on a line with text, or at a question.
    Interrupted,
    /// Ctrl-D, Ctrl-C on the main prompt's empty line, or the input ended.
    Eof,
}

/// One line asked for: the prompt, whether the answer goes into the
/// history, where the answer goes.
struct Ask {
    prompt: String,
    history: bool,
    reply: oneshot::Sender<Input>,
}

/// The line editor's handle; cheap to clone. The thread ends once every
/// handle is dropped.
#[derive(Clone)]
pub struct LineEditor {
    asks: std_mpsc::Sender<Ask>,
}

/// Ctrl-C at the main prompt: on an empty line it ends input as Ctrl-D
/// does, on a line with text it drops the line; at a question (`quits`
/// false) it always interrupts.
struct CtrlC {
    quits: Arc<AtomicBool>,
}

impl ConditionalEventHandler for CtrlC {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext<'_>) -> Option<Cmd> {
        Some(
            if ctx.line().is_empty() && self.quits.load(Ordering::Relaxed) {
                Cmd::EndOfFile
            } else {
                Cmd::Interrupt
            },
        )
    }
}

impl LineEditor {
    /// Starts the editor's thread.
    ///
    /// # Errors
    ///
    /// When the terminal cannot be set up.
    pub fn spawn() -> Result<Self, String> {
        let mut editor = rustyline::DefaultEditor::new().map_err(|e| e.to_string())?;
        let quits = Arc::new(AtomicBool::new(true));
        let handler = CtrlC {
            quits: Arc::clone(&quits),
        };
        editor.bind_sequence(
            KeyEvent::ctrl('C'),
            EventHandler::Conditional(Box::new(handler)),
        );
        let (asks, rx) = std_mpsc::channel::<Ask>();
        std::thread::Builder::new()
            .name("line-editor".to_owned())
            .spawn(move || {
                while let Ok(ask) = rx.recv() {
                    // The main prompt keeps a history; a question does not,
                    // and Ctrl-C there always interrupts.
                    quits.store(ask.history, Ordering::Relaxed);
                    let input = match editor.readline(&ask.prompt) {
                        Ok(line) => {
                            if ask.history && !line.trim().is_empty() {
                                let _ = editor.add_history_entry(line.as_str());
                            }
                            Input::Line(line)
                        }
                        Err(ReadlineError::Interrupted) => Input::Interrupted,
                        Err(_) => Input::Eof,
                    };
                    let _ = ask.reply.send(input);
                }
            })
            .map_err(|e| format!("cannot start the line editor: {e}"))?;
        Ok(Self { asks })
    }

    /// Prints `text` on a line of its own below the line being read (the
    /// terminal is in raw mode then: `\r\n` ends a line). (rustyline's
    /// external printer would redraw the line below it, but with one the
    /// editor stopped reading keys on a pseudo-terminal.)
    pub fn print(&self, text: &str) {
        print!("\r\n{}\r\n", text.trim_end());
        let _ = std::io::Write::flush(&mut std::io::stdout());
    }

    /// Reads one line after `prompt`. `history`: the main prompt (the line
    /// is kept in the history, Ctrl-C on an empty line quits); else a
    /// question.
    pub async fn read(&self, prompt: &str, history: bool) -> Input {
        let (reply, answer) = oneshot::channel();
        let ask = Ask {
            prompt: prompt.to_owned(),
            history,
            reply,
        };
        if self.asks.send(ask).is_err() {
            return Input::Eof;
        }
        answer.await.unwrap_or(Input::Eof)
    }
}
