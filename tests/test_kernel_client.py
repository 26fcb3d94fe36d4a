"""actlab.kernel_client: the ready-wait ends at the kernel_info exchange's closing idle; no later message is lost."""

from __future__ import annotations

from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import KernelManager
from jupyter_core.utils import run_sync

from actlab import kernel_client, notebooks


class _Channel:
    """A channel that hands out queued messages, then raises Empty (after no real wait)."""

    def __init__(self, messages: list[dict]) -> None:
        self.messages, self.timeouts = list(messages), []

    async def get_msg(self, timeout: float | None = None) -> dict:
        self.timeouts.append(timeout)
        if not self.messages:
            raise Empty
        return self.messages.pop(0)


def _status(state: str, parent: str) -> dict:
    return {"msg_type": "status", "content": {"execution_state": state}, "parent_header": {"msg_id": parent}}


class _FakeKernel(kernel_client.PromptKernelClient):
    """The client with its channels and liveness replaced: no kernel, the messages given."""

    shell_channel = iopub_channel = None  # plain attributes instead of jupyter_client's channel properties

    def kernel_info(self) -> str:
        return "request-1"

    async def is_alive(self) -> bool:
        return True


def _client(iopub: list[dict], protocol: str = "5.3") -> _FakeKernel:
    client = _FakeKernel(parent=KernelManager())  # a client a kernel manager made (no kernel started)
    reply = {"msg_type": "kernel_info_reply", "content": {"protocol_version": protocol}, "parent_header": {}}
    client.shell_channel, client.iopub_channel = _Channel([reply]), _Channel(iopub)
    return client


def test_the_drain_stops_at_the_requests_idle_and_leaves_the_next_message():
    later = {"msg_type": "stream", "content": {"text": "first output"}, "parent_header": {"msg_id": "execute-1"}}
    client = _client([_status("busy", "request-1"), _status("idle", "older"), _status("idle", "request-1"), later])
    run_sync(client.wait_for_ready)(timeout=5)
    assert client.iopub_channel.messages == [later]  # drained up to and including the idle, not one further
    assert client.iopub_channel.timeouts == [kernel_client.DRAIN_TIMEOUT] * 3


def test_without_the_idle_the_drain_ends_on_its_timeout():
    client = _client([_status("busy", "request-1")])
    run_sync(client.wait_for_ready)(timeout=5)
    assert client.iopub_channel.messages == []
    assert client.iopub_channel.timeouts == [kernel_client.DRAIN_TIMEOUT] * 2  # the busy, then one empty wait


def test_an_older_kernels_protocol_is_spoken_as_jupyter_client_would():
    client = _client([_status("idle", "request-1")], protocol="4.1")
    run_sync(client.wait_for_ready)(timeout=5)
    assert client.session.adapt_version == 4
    assert _client([_status("idle", "request-1")]).session.adapt_version != 4  # a 5.x kernel: nothing to adapt


def test_a_client_without_a_kernel_manager_keeps_jupyter_clients_wait(monkeypatch):
    """No manager, no process to ask whether the kernel lives: jupyter_client's wait (heartbeats first) applies."""
    calls = []

    async def stock_wait(self, timeout=None):
        calls.append(timeout)

    monkeypatch.setattr(AsyncKernelClient, "wait_for_ready", stock_wait)
    run_sync(kernel_client.PromptKernelClient().wait_for_ready)(timeout=7)
    assert calls == [7]


def test_a_real_kernel_runs_code_and_shows_its_output_right_after_the_wait(tmp_path):
    """The subscription is live when the wait returns: the first execution's output arrives on IOPub."""
    manager = notebooks._ipc_kernel_manager(str(tmp_path))(kernel_name=notebooks.ensure_kernel())
    run_sync(manager.start_kernel)()
    try:
        for _ in range(3):  # a kept kernel is connected to again and again
            client = manager.client()
            assert isinstance(client, kernel_client.PromptKernelClient)
            client.start_channels()
            outputs: list[str] = []

            async def run(client=client, outputs=outputs) -> dict:
                await client.wait_for_ready(timeout=60)
                hook = lambda message: outputs.append(message["content"].get("text", ""))  # noqa: E731
                return await client.execute_interactive("print(6 * 7)", timeout=60, output_hook=hook)

            reply = run_sync(run)()
            client.stop_channels()
            assert reply["content"]["status"] == "ok"
            assert "".join(outputs).strip() == "42"
    finally:
        run_sync(manager.shutdown_kernel)(now=True)
