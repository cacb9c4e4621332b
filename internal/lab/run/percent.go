package run

import (
	"fmt"
	"strconv"
)

// Percent is a flag.Value for a share given as a percentage, "10%" or
// "10": the text is read once, when the flag is set, into *Share, a
// fraction.
type Percent struct {
	Name   string   // the flag, "-max-foreign", for messages
	Share  *float64 // where the share goes
	Lo, Hi float64  // the shares allowed, as fractions
	// ZeroWhy, when not empty, refuses 0% and says why.
	ZeroWhy string
}

func (p Percent) String() string {
	if p.Share == nil { // the flag package's zero value
		return ""
	}
	return strconv.FormatFloat(100*(*p.Share), 'g', -1, 64) + "%"
}

func (p Percent) Set(s string) error {
	v, err := parsePercent(p.Name, s, p.Lo, p.Hi)
	if err != nil {
		return err
	}
	if v == 0 && p.ZeroWhy != "" {
		return fmt.Errorf("%s 0%%: %s", p.Name, p.ZeroWhy)
	}
	*p.Share = v
	return nil
}

// MaxForeignFlag is -max-foreign's flag.Value, the validity gate's share:
// 0% to 100%, but not 0%.
func MaxForeignFlag(share *float64) Percent {
	return Percent{Name: "-max-foreign", Share: share, Hi: 1,
		ZeroWhy: "every run would be spoiled (a quiet run reads a few percent from the kernel's ticks); give a share such as 10%"}
}
