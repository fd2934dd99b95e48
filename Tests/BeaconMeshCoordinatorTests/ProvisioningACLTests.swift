import BeaconMeshCoordinator
import Foundation
import Testing

@Suite("provisioning: ACL file editing")
struct ProvisioningACLTests {
    @Test("a new file gets the header, the patterns block first, then one block per user")
    func newFile() {
        var acl = ProvisioningACL()
        acl.setPatterns(ProvisioningACL.patternLines())
        acl.setUser("monitor-1", lines: ["topic read beaconmesh/v1/stores/1/#"])
        let lines = acl.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.hasPrefix("# BeaconMesh broker ACL") == true)
        let firstRule = lines.firstIndex { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(firstRule.map { lines[$0] } == "pattern write beaconmesh/v1/stores/+/members/%u/ranging")
        #expect(acl.userLines("monitor-1") == ["user monitor-1", "topic read beaconmesh/v1/stores/1/#"])
        #expect(acl.text.hasSuffix("# <<< beaconmesh user monitor-1\n"))
    }

    @Test("setting the same blocks twice leaves the file byte for byte the same")
    func idempotent() {
        var acl = ProvisioningACL()
        for _ in 0..<2 {
            acl.setPatterns(ProvisioningACL.patternLines())
            acl.setUser("node-1-10-a", lines: ["topic write a"])
            acl.setUser("monitor-1", lines: ["topic read b"])
        }
        var once = ProvisioningACL()
        once.setPatterns(ProvisioningACL.patternLines())
        once.setUser("node-1-10-a", lines: ["topic write a"])
        once.setUser("monitor-1", lines: ["topic read b"])
        #expect(acl == once)
        #expect(acl.users == ["node-1-10-a", "monitor-1"])
    }

    @Test("a changed block is replaced in place; other users and hand-written rules stay")
    func replaceInPlace() {
        var acl = ProvisioningACL(text: "# my notes\nuser ops\ntopic read #\n")
        acl.setPatterns(ProvisioningACL.patternLines())
        acl.setUser("coordinator-bo", lines: ["topic read x"])
        acl.setUser("monitor-1", lines: ["topic read y"])
        acl.setUser("coordinator-bo", lines: ["topic read x", "topic read z"])
        #expect(acl.users == ["coordinator-bo", "monitor-1"])
        #expect(acl.userLines("coordinator-bo") == ["user coordinator-bo", "topic read x", "topic read z"])
        #expect(acl.text.contains("# my notes\n"))
        #expect(acl.text.contains("user ops\ntopic read #\n"))
        // The patterns come before the hand-written user block, so no user line precedes them.
        let patterns = acl.text.range(of: "pattern read")!.lowerBound
        #expect(patterns < acl.text.range(of: "user ops")!.lowerBound)
    }

    @Test("removing a user takes out its block and nothing else; removing an unknown one changes nothing")
    func remove() {
        var acl = ProvisioningACL()
        acl.setPatterns(ProvisioningACL.patternLines())
        acl.setUser("a", lines: ["topic read a"])
        acl.setUser("b", lines: ["topic read b"])
        let before = acl
        let removedNobody = acl.removeUser("nobody")
        #expect(removedNobody == false)
        #expect(acl == before)
        let removedA = acl.removeUser("a")
        #expect(removedA)
        #expect(acl.users == ["b"])
        #expect(!acl.text.contains("topic read a"))
        #expect(acl.text.contains("pattern read"))
        var again = ProvisioningACL()
        again.setPatterns(ProvisioningACL.patternLines())
        again.setUser("b", lines: ["topic read b"])
        #expect(acl == again, "removing a block also removes the blank line that separated it")
    }

    @Test("a user name that is a prefix of another does not touch the other's block")
    func prefixNames() {
        var acl = ProvisioningACL()
        acl.setUser("node-1-10-a", lines: ["topic write one"])
        acl.setUser("node-1-10-ab", lines: ["topic write two"])
        acl.setUser("node-1-10-a", lines: ["topic write three"])
        #expect(acl.userLines("node-1-10-ab") == ["user node-1-10-ab", "topic write two"])
        #expect(acl.userLines("node-1-10-a") == ["user node-1-10-a", "topic write three"])
    }
}
