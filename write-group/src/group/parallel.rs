//! Parallel groups: the tree launch, and each member's apply and finish.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering::{AcqRel, Relaxed};

use crate::commit::Commit;
use crate::members::item_mut;
use crate::sync::{AtomicUsize, UnsafeCell};
use crate::waiter::{COMPLETED, PARALLEL_CALLER, PARALLEL_WRITER, Waiter};

use super::WriteGroup;
use super::form::Formed;
use super::lead::Exit;
use super::node::{Node, Outcome, Panic};

/// A parallel group's shared context, on the leader's stack. The leader
/// cannot return before it is completed, which happens after every member
/// stopped using the context.
pub(super) struct GroupCtx<T, C: Commit<T>> {
    commit: *const C,
    formed: Formed<T>,
    stride: usize,
    /// Members still applying; the one that brings it to 0 exits the group.
    running: AtomicUsize,
    /// Shared by `apply` calls, then taken by `publish`.
    token: UnsafeCell<Option<C::Token>>,
    /// The group's publish ticket.
    ticket: u32,
}

impl<T, C> WriteGroup<T, C>
where
    T: Send,
    C: Commit<T> + Sync,
    C::Token: Send + Sync,
    C::Error: Send,
{
    /// Launches a parallel group, applies the leader's own item, and finishes.
    ///
    /// # Safety
    ///
    /// We lead `formed` (at least 2 members), and `node` is ours.
    pub(super) unsafe fn run_parallel(
        &self,
        commit: &C,
        node: &Node<T, C>,
        formed: Formed<T>,
        token: C::Token,
        ticket: u32,
    ) -> Option<Panic> {
        let ctx = GroupCtx::<T, C> {
            commit,
            formed,
            stride: self.options.launch_stride(formed.len),
            running: AtomicUsize::new(formed.len),
            token: UnsafeCell::new(Some(token)),
            ticket,
        };
        let ctx: *const GroupCtx<T, C> = &ctx;
        let mut woken = 0;
        let mut waiter = formed.leader;
        // SAFETY: `ctx` lives on our stack until we are completed or finish
        // the group ourselves; members are live until the group completes,
        // which needs our own `finish_parallel` first.
        unsafe {
            for _ in 1..(*ctx).stride {
                // Relaxed: leader-only link.
                waiter = (*waiter).link_newer.load(Relaxed);
                Self::launch(waiter, ctx, PARALLEL_CALLER);
                woken += 1;
            }
            woken += Self::wake_every_stride(ctx, formed.leader);
            self.counters.leader_wakeups(woken);
            Self::apply_parallel(ctx, node.as_waiter());
            self.finish_parallel(ctx, node)
        }
    }

    /// Gives `waiter` its group and role.
    ///
    /// # Safety
    ///
    /// `waiter` is a member of `ctx`'s group waiting for a role, woken only
    /// by us.
    #[inline]
    unsafe fn launch(waiter: *const Waiter<T>, ctx: *const GroupCtx<T, C>, role: u32) {
        // SAFETY: the caller's contract; published by `set_state`'s Release.
        unsafe {
            (*Node::<T, C>::of(waiter))
                .group
                .with_mut(|group| *group = ctx);
            Self::set_state(waiter, role);
        }
    }

    /// Wakes every stride-th member after `from` as a parallel writer;
    /// returns how many.
    ///
    /// # Safety
    ///
    /// `ctx` is live, `from` a member of its group, and we have not yet
    /// finished our own apply (so no member can complete and vanish).
    unsafe fn wake_every_stride(ctx: *const GroupCtx<T, C>, from: *const Waiter<T>) -> usize {
        // SAFETY: the caller's contract.
        let (stride, last) = unsafe { ((*ctx).stride, (*ctx).formed.last) };
        let mut woken = 0;
        let mut waiter = from;
        loop {
            for _ in 0..stride {
                if waiter == last {
                    return woken;
                }
                // SAFETY: the caller's contract; a woken member keeps its
                // links. Relaxed: the group's links, ordered before our role
                // by the leader's Release.
                waiter = unsafe { (*waiter).link_newer.load(Relaxed) };
            }
            // SAFETY: the caller's contract: this member is ours to wake.
            unsafe { Self::launch(waiter, ctx, PARALLEL_WRITER) };
            woken += 1;
        }
    }

    /// Applies our own item in a parallel group.
    ///
    /// # Safety
    ///
    /// `ctx` is live and `me` is our member of its group.
    unsafe fn apply_parallel(ctx: *const GroupCtx<T, C>, me: *const Waiter<T>) {
        // SAFETY: the caller's contract: the leader's commit outlives the
        // group, the token is shared until the last member takes it, and our
        // item and outcome are ours alone.
        unsafe {
            let commit = &*(*ctx).commit;
            let token = (*ctx).token.with(|token| &*token);
            let token = token
                .as_ref()
                .unwrap_or_else(|| unreachable!("taken only after all applied"));
            let item = item_mut(me);
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| commit.apply(item, token))) {
                Node::<T, C>::set_outcome(me, Outcome::Panicked(panic));
            }
        }
    }

    /// Counts our member out; the last one exits the group, the others wait
    /// for it.
    ///
    /// # Safety
    ///
    /// `ctx` is live, `node` ours and a member that has applied.
    unsafe fn finish_parallel(
        &self,
        ctx: *const GroupCtx<T, C>,
        node: &Node<T, C>,
    ) -> Option<Panic> {
        // SAFETY: the context lives until we count out; copy what the exit
        // needs first.
        let (formed, commit, ticket) = unsafe { ((*ctx).formed, (*ctx).commit, (*ctx).ticket) };
        // SAFETY: as above; after this we touch the context only if we are
        // the last. AcqRel: Release hands our apply to the last member;
        // Acquire, for the last one, makes every apply visible to `publish`.
        let running = unsafe { (*ctx).running.fetch_sub(1, AcqRel) };
        if running == 1 {
            // SAFETY: every other member counted out and waits for
            // completion; the leader's stack (the context) lives until then.
            unsafe {
                let token = (*ctx).token.with_mut(|token| (*token).take());
                let token = token.unwrap_or_else(|| unreachable!("taken once"));
                self.exit_group(
                    formed,
                    node.as_waiter(),
                    Exit::Publish(commit, token, ticket),
                )
            }
        } else {
            self.await_state(&node.waiter.futex, COMPLETED, &self.complete_credit, true);
            None
        }
    }

    /// Runs a parallel member's role.
    pub(super) fn run_member(&self, node: &Node<T, C>, caller: bool) -> Option<Panic> {
        let ctx = node.group.with(|group| {
            // SAFETY: set by our waker before our role, which we acquired.
            unsafe { *group }
        });
        // SAFETY: the context and the group's members are live until we count
        // out in `finish_parallel`.
        unsafe {
            if caller {
                self.counters
                    .caller_wakeups(Self::wake_every_stride(ctx, node.as_waiter()));
            }
            Self::apply_parallel(ctx, node.as_waiter());
            self.finish_parallel(ctx, node)
        }
    }
}
