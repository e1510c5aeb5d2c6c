//! Commands that must take effect in call order (event appends, publishes): each call queues
//! its command at once, and one task sends the queue in order, as pipelines — under load many
//! commands share one round trip, and a caller that does not await still keeps its order.

use redis::aio::ConnectionManager;
use redis::{Cmd, RedisError, RedisResult, Value};
use tokio::sync::{mpsc, oneshot};

/// Commands sent in one pipeline at most.
const BATCH: usize = 128;

struct Job {
    cmd: Cmd,
    reply: oneshot::Sender<RedisResult<Value>>,
}

/// The queue of one connection's ordered commands. The sending task ends when every clone of
/// this is dropped.
#[derive(Debug, Clone)]
pub(crate) struct Ordered {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Ordered {
    /// Start the task that sends the queue on `conn` (needs a Tokio runtime).
    pub(crate) fn start(conn: ConnectionManager) -> Ordered {
        let (jobs, rx) = mpsc::unbounded_channel();
        tokio::spawn(send_in_order(conn, rx));
        Ordered { jobs }
    }

    /// Queue `cmd` behind every command queued before; the receiver gets its reply.
    pub(crate) fn send(&self, cmd: Cmd) -> oneshot::Receiver<RedisResult<Value>> {
        let (reply, rx) = oneshot::channel();
        // A closed queue drops `reply`, and the receiver reports that as an error.
        let _ = self.jobs.send(Job { cmd, reply });
        rx
    }
}

/// What a receiver of [`Ordered::send`] reads when the sending task is gone.
pub(crate) fn queue_closed() -> RedisError {
    RedisError::from((redis::ErrorKind::Client, "the Redis command queue is closed"))
}

async fn send_in_order(mut conn: ConnectionManager, mut rx: mpsc::UnboundedReceiver<Job>) {
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(first) = rx.recv().await {
        batch.push(first);
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let mut pipe = redis::pipe();
        for job in &batch {
            pipe.add_command(job.cmd.clone());
        }
        match pipe
            .ignore_errors()
            .query_async::<Vec<RedisResult<Value>>>(&mut conn)
            .await
        {
            Ok(replies) => {
                for (job, reply) in batch.drain(..).zip(replies) {
                    let _ = job.reply.send(reply);
                }
                // A short reply list leaves jobs without an answer: they fail as dropped.
                batch.clear();
            }
            Err(e) => {
                for job in batch.drain(..) {
                    let _ = job.reply.send(Err(e.clone()));
                }
            }
        }
    }
}
