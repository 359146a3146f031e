static void rcu_bootup_announce(void)
{
	pr_info("Preemptible hierarchical RCU implementation.\n");
}
